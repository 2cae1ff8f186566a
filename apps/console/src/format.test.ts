import { describe, expect, it } from "vitest";
import { latencyTicks, money, plainAmount } from "./format.js";

describe("money", () => {
  it("never shows a charged amount as $0.00, however small", () => {
    expect(money(2.2e-7)).toBe("$0.00000022");
    expect(money(0.0000001)).toBe("$0.0000001");
    expect(money(1e-12)).toBe("$0.000000000001");
    expect(money(3e-14)).toBe("$0.00000000000003");
  });

  it("keeps every digit down to the picodollar the gateway keeps", () => {
    expect(money(6200.00047022)).toBe("$6,200.00047022");
    expect(money(0.123456789012)).toBe("$0.123456789012");
    expect(money(0.00027)).toBe("$0.00027");
  });

  it("writes whole and round amounts with cents", () => {
    expect(money(0)).toBe("$0.00");
    expect(money(2)).toBe("$2.00");
    expect(money(1.5)).toBe("$1.50");
    expect(money(1e9)).toBe("$1,000,000,000.00");
    expect(money(-0.5)).toBe("-$0.50");
  });

  it("drops what floating-point sums add beyond the figures' own digits", () => {
    expect(money(0.1 + 0.2)).toBe("$0.30");
    expect(money(0.00000022 + 0.00000044)).toBe("$0.00000066");
  });

  it("shows nothing as a dash", () => {
    expect(money(null)).toBe("—");
    expect(money(undefined)).toBe("—");
  });
});

describe("latencyTicks", () => {
  it("writes ticks closer than a millisecond apart with the decimals that tell them apart", () => {
    expect(latencyTicks([0, 0.5, 1, 1.5, 2])).toEqual(["0.0 ms", "0.5 ms", "1.0 ms", "1.5 ms", "2.0 ms"]);
    expect(latencyTicks([0, 0.25, 0.5])).toEqual(["0.00 ms", "0.25 ms", "0.50 ms"]);
  });

  it("keeps one unit along the axis", () => {
    expect(latencyTicks([0, 5000, 10_000, 15_000])).toEqual(["0 s", "5 s", "10 s", "15 s"]);
    expect(latencyTicks([0, 2500, 5000, 7500])).toEqual(["0 ms", "2,500 ms", "5,000 ms", "7,500 ms"]);
    expect(latencyTicks([10_000, 12_500, 15_000])).toEqual(["10.0 s", "12.5 s", "15.0 s"]);
  });

  it("writes whole milliseconds without decimals", () => {
    expect(latencyTicks([0, 10, 20, 30])).toEqual(["0 ms", "10 ms", "20 ms", "30 ms"]);
    expect(latencyTicks([])).toEqual([]);
  });
});

describe("plainAmount", () => {
  it("writes an amount as digits a form reads back, never with an exponent", () => {
    expect(plainAmount(1e-7)).toBe("0.0000001");
    expect(plainAmount(1e9)).toBe("1000000000");
    expect(plainAmount(12.5)).toBe("12.5");
    expect(plainAmount(0.1 + 0.2)).toBe("0.3");
  });
});
