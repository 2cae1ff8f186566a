import { describe, expect, it } from "vitest";
import { createLimitCache } from "./limit-cache.js";

describe("limit cache", () => {
  it("remembers keys without a limit until they change or the entry ages out", async () => {
    let clock = 0;
    const cache = createLimitCache(1000, () => clock);
    expect(await cache.limited("a", async () => false)).toBe(false);
    expect(await cache.limited("b", async () => true)).toBe(true);
    expect([cache.unlimited("a"), cache.unlimited("b")]).toEqual([true, false]);
    cache.forget("a");
    expect(cache.unlimited("a")).toBe(false);
    await cache.limited("a", async () => false);
    clock = 1001;
    expect(cache.unlimited("a")).toBe(false);
  });

  it("does not store what a read saw before a change that landed while it ran", async () => {
    const cache = createLimitCache();
    let release!: () => void;
    const read = cache.limited("a", () => new Promise<boolean>((resolve) => (release = () => resolve(false))));
    cache.forget("a"); // the key got a limit while the read was under way
    release();
    expect(await read).toBe(false);
    expect(cache.unlimited("a")).toBe(false);
  });
});
