import { describe, expect, it } from "vitest";
import { bucketMiddle, lastBucket, timingBucket } from "./timings.js";

describe("timing buckets", () => {
  it("put times under 10 ms in the first bucket, each next one a quarter longer, the longest in the last", () => {
    expect([0, 9.9, 10, 12.4, 12.5, 15.6, 15.7].map(timingBucket)).toEqual([0, 0, 1, 1, 2, 2, 3]);
    expect(timingBucket(Number.NaN)).toBe(0);
    expect(timingBucket(1e12)).toBe(lastBucket);
  });

  it("stand for their times within 12%", () => {
    for (const ms of [11, 95, 480, 2_300, 61_000, 3_600_000]) expect(Math.abs(bucketMiddle(timingBucket(ms)) - ms) / ms).toBeLessThan(0.12);
    expect(bucketMiddle(0)).toBe(5);
  });
});
