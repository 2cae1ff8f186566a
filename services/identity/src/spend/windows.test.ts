import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { utcDay, windowStart, windowStarts } from "./windows.js";

const msPerDay = 86_400_000;
/** An oracle independent of the implementation: 1970-01-01 was a Thursday, so Monday-based weeks are (days + 3) / 7. */
const daysSinceEpoch = (at: Date) => Math.floor(at.getTime() / msPerDay);
const weekIndex = (at: Date) => Math.floor((daysSinceEpoch(at) + 3) / 7);
const monthIndex = (at: Date) => at.getUTCFullYear() * 12 + at.getUTCMonth();

/** Whether spend at `event` counts in the window of `reset` as seen at `now`: the ledger's rule, day >= start. */
const counted = (reset: "daily" | "weekly" | "monthly", event: Date, now: Date) => utcDay(event) >= windowStart(reset, windowStarts(now))!;

const instant = fc.date({ min: new Date("1971-01-01T00:00:00Z"), max: new Date("2200-12-31T23:59:59.999Z"), noInvalidDate: true });

describe("usage windows", () => {
  it("counts spend in the current UTC day, Monday-based week and calendar month, and nothing before", () => {
    fc.assert(
      fc.property(instant, fc.integer({ min: 0, max: 70 * msPerDay }), (now, ago) => {
        const event = new Date(now.getTime() - ago);
        expect(counted("daily", event, now)).toBe(daysSinceEpoch(event) === daysSinceEpoch(now));
        expect(counted("weekly", event, now)).toBe(weekIndex(event) === weekIndex(now));
        expect(counted("monthly", event, now)).toBe(monthIndex(event) === monthIndex(now));
      }),
      { numRuns: 2000 },
    );
  });

  it("starts weeks on Monday and months on the 1st", () => {
    fc.assert(
      fc.property(instant, (now) => {
        const starts = windowStarts(now);
        expect(new Date(`${starts.week}T00:00:00Z`).getUTCDay()).toBe(1);
        expect(starts.month.endsWith("-01")).toBe(true);
        expect(starts.week <= starts.day && starts.month <= starts.day).toBe(true);
      }),
    );
  });

  it("turns over exactly at the boundaries", () => {
    const before = new Date("2026-11-29T23:59:59.999Z"); // a Sunday
    const after = new Date("2026-11-30T00:00:00.000Z"); // the Monday after
    expect(windowStarts(before)).toEqual({ day: "2026-11-29", week: "2026-11-23", month: "2026-11-01" });
    expect(windowStarts(after)).toEqual({ day: "2026-11-30", week: "2026-11-30", month: "2026-11-01" });
    expect(counted("weekly", before, after)).toBe(false);

    expect(windowStarts(new Date("2027-01-31T23:59:59.999Z")).month).toBe("2027-01-01");
    expect(windowStarts(new Date("2027-02-01T00:00:00.000Z")).month).toBe("2027-02-01");
    expect(counted("monthly", new Date("2027-01-31T23:59:59.999Z"), new Date("2027-02-01T00:00:00.000Z"))).toBe(false);

    // A leap day belongs to February, and its week runs Monday 2028-02-28 to Sunday 2028-03-05.
    expect(windowStarts(new Date("2028-02-29T12:00:00Z"))).toEqual({ day: "2028-02-29", week: "2028-02-28", month: "2028-02-01" });
    expect(counted("monthly", new Date("2028-02-29T23:59:59.999Z"), new Date("2028-03-01T00:00:00Z"))).toBe(false);
    expect(counted("weekly", new Date("2028-02-29T23:59:59.999Z"), new Date("2028-03-01T00:00:00Z"))).toBe(true);
    expect(windowStart(null, windowStarts(after))).toBeNull();
  });
});
