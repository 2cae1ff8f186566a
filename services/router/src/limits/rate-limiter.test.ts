import { describe, expect, it } from "vitest";
import { decide, memoryRateLimiter } from "./rate-limiter.js";

describe("rate limiter", () => {
  it("admits up to the limit within one minute, then refuses with Retry-After", async () => {
    let t = 60_000 * 1000; // start of a minute
    const limiter = memoryRateLimiter(() => t);
    for (let i = 0; i < 5; i++) expect((await limiter.hit("k", 5)).allowed).toBe(true);
    const refused = await limiter.hit("k", 5);
    expect(refused.allowed).toBe(false);
    // Five hits at the very start of a minute fade enough 12 s into the next one: 5·(1−0.2) + 1 = 5.
    expect(refused.retryAfterSeconds).toBe(72);
    // Other keys are independent.
    expect((await limiter.hit("other", 5)).allowed).toBe(true);
    // The previous minute fades: at 59 s into the next minute the old hits barely count.
    t += 60_000 + 59_000;
    expect((await limiter.hit("k", 5)).allowed).toBe(true);
  });

  it("weights the previous minute by how much of it is still inside the sliding window", () => {
    const start = 60_000 * 5;
    expect(decide(10, 1, 10, start).allowed).toBe(false); // previous minute fully counts
    expect(decide(10, 1, 10, start + 30_000).allowed).toBe(true); // half of it counts: 5 + 1
    const refused = decide(10, 6, 10, start + 30_000); // 5 + 6 = 11 > 10
    expect(refused.allowed).toBe(false);
    // 10 * (1 - e) + 6 <= 10 once e >= 0.6, i.e. 36 s into the minute: 6 s from now.
    expect(refused.retryAfterSeconds).toBe(6);
  });

  it("asks for the next minute when this minute alone is over the limit", () => {
    const start = 60_000 * 5;
    const refused = decide(0, 20, 10, start + 50_000);
    expect(refused.allowed).toBe(false);
    // 10 s to the next minute, then 19·(1−e) + 1 <= 10 at e = 10/19: about 31.6 s more.
    expect(refused.retryAfterSeconds).toBe(42);
  });
});
