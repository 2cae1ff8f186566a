import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";

/** The built module: a fresh process imports it, as a gateway does. */
const built = new URL("../dist/heap.js", import.meta.url).href;

/**
 * The factor by which V8 lets the old generation grow past what a full collection kept, as V8 itself reports it
 * (`--trace-gc-verbose`), in a fresh process that keeps 300,000 small objects alive and collects once, after
 * `limitHeapGrowth` when `limit`, started with `flags`. Read from V8, not from the heap's size: how far a heap
 * overshoots its limit depends on how busy the machine is.
 */
function growthFactor(limit: boolean, flags: string[] = []): number {
  const script = `
    import { limitHeapGrowth } from ${JSON.stringify(built)};
    if (${limit}) limitHeapGrowth();
    const live = [];
    for (let i = 0; i < 300000; i++) live.push({ i });
    gc();`;
  const out = execFileSync(process.execPath, ["--trace-gc-verbose", "--expose-gc", ...flags, "--input-type=module", "-e", script], { encoding: "utf8" });
  const factors = [...out.matchAll(/\[HeapController\] Limit: .*\((\d+(?:\.\d+)?)\)/g)].map((match) => Number(match[1]));
  expect(factors.length).toBeGreaterThan(0);
  return factors.at(-1)!;
}

describe("limitHeapGrowth", () => {
  it("keeps the heap of a process that makes garbage well below what V8 lets it grow to", () => {
    const own = growthFactor(false);
    const limited = growthFactor(true);
    expect(limited).toBeLessThan(own * 0.75);
    expect(limited).toBe(2);
  });

  it("leaves a process started with its own growth setting as it was started", () => {
    const own = growthFactor(false);
    const started = growthFactor(true, ["--heap-growing-percent=300"]);
    expect(started).toBeGreaterThan(own * 0.75);
  });
});
