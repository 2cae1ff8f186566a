import { describe, expect, it } from "vitest";
import { z } from "zod";
import { beforeYear10000, instantMicros, picodollarAmount, storedInstant, wholePicodollars } from "./stored-values.js";

describe("instantMicros", () => {
  it("reads real dates and times to the microsecond, offsets applied", () => {
    expect(instantMicros("1970-01-01T00:00:00Z")).toBe(0n);
    expect(instantMicros("1970-01-01T00:00:01.5Z")).toBe(1_500_000n);
    expect(instantMicros("1970-01-01T01:00:00+01:00")).toBe(0n);
    expect(instantMicros("1969-12-31T23:30:00-00:30")).toBe(0n);
    expect(instantMicros("2028-02-29T00:00:00Z")).toBe(BigInt(Date.parse("2028-02-29T00:00:00Z")) * 1000n);
    expect(instantMicros("2000-02-29T00:00:00Z")).toBeDefined();
    expect(instantMicros("0050-06-01T00:00:00Z")).toBe(BigInt(Date.parse("0050-06-01T00:00:00Z")) * 1000n);
  });

  it("rounds beyond six fraction digits as Postgres does at the bound", () => {
    expect(instantMicros("1970-01-01T00:00:00.0000004Z")).toBe(0n);
    expect(instantMicros("1970-01-01T00:00:00.0000005Z")).toBe(1n);
    expect(instantMicros("1970-01-01T00:00:00.9999999Z")).toBe(1_000_000n);
  });

  it.each([
    "2030-02-30T00:00:00Z",
    "2030-04-31T00:00:00Z",
    "2029-02-29T00:00:00Z",
    "1900-02-29T00:00:00Z",
    "2030-13-01T00:00:00Z",
    "2030-00-10T00:00:00Z",
    "2030-01-00T00:00:00Z",
    "2030-01-01T24:00:00Z",
    "2030-01-01T23:60:00Z",
    "2030-01-01T23:59:60Z",
    "2030-01-01T00:00:00+24:00",
    "2030-01-01T00:00:00+01:60",
    "2030-01-01T00:00Z",
    "2030-01-01 00:00:00Z",
    "tomorrow",
  ])("refuses %s", (value) => {
    expect(instantMicros(value)).toBeUndefined();
  });
});

describe("beforeYear10000", () => {
  it("takes the last microsecond of 9999 and refuses what rounds or shifts past it", () => {
    expect(beforeYear10000("9999-12-31T23:59:59.999Z")).toBe(true);
    expect(beforeYear10000("9999-12-31T23:59:59.999999Z")).toBe(true);
    expect(beforeYear10000("9999-12-31T23:59:59.9999994Z")).toBe(true);
    expect(beforeYear10000("9999-12-31T23:59:59.9999995Z")).toBe(false);
    expect(beforeYear10000("9999-12-31T23:59:59.9999999Z")).toBe(false);
    expect(beforeYear10000("9999-12-31T23:30:00-01:00")).toBe(false);
    expect(beforeYear10000("9999-12-31T23:30:00+01:00")).toBe(true);
  });
});

describe("wholePicodollars", () => {
  it.each([0, 1, 5e-12, 1e-12, 0.123456789012, 123.456789012345, 1e9, 999999999.999])("takes %s", (amount) => {
    expect(wholePicodollars(amount)).toBe(true);
  });

  it.each([4e-13, 1e-13, 1.0000000000001, 0.1234567890123, 1.5e-12, Number.NaN, Number.POSITIVE_INFINITY])("refuses %s", (amount) => {
    expect(wholePicodollars(amount)).toBe(false);
  });
});

describe("the schema helpers", () => {
  it("name the rule each refusal breaks", () => {
    const instant = storedInstant(z.string());
    expect(instant.safeParse("2030-02-30T00:00:00Z").error?.issues[0]?.message).toBe("must be a real date and time");
    expect(instant.safeParse("9999-12-31T23:59:59.9999999Z").error?.issues[0]?.message).toMatch(/before 10000-01-01/);
    expect(instant.safeParse("2030-02-28T00:00:00+16:00").error?.issues[0]?.message).toBe("must have a UTC offset of at most 15:59 either way");
    expect(instant.safeParse("2030-02-28T00:00:00Z").success).toBe(true);
    expect(instant.safeParse("2030-02-28T00:00:00-15:59").success).toBe(true);
    const amount = picodollarAmount(z.number());
    expect(amount.safeParse(4e-13).error?.issues[0]?.message).toMatch(/picodollars/);
    expect(amount.safeParse(2.5).success).toBe(true);
  });
});
