import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";

/** The built module: a fresh process imports it, as a gateway does. */
const built = new URL("../dist/heap.js", import.meta.url).href;

/**
 * The largest V8 heap (`heapTotal`, bytes) of a fresh process that keeps 400,000 small objects alive and
 * makes garbage beside them, after `limitHeapGrowth` when `limit`, started with `flags`.
 */
function largestHeap(limit: boolean, flags: string[] = []): number {
  const script = `
    import { limitHeapGrowth } from ${JSON.stringify(built)};
    if (${limit}) limitHeapGrowth();
    const live = [];
    for (let i = 0; i < 400000; i++) live.push({ i, s: "v" + i, a: [i, i + 1] });
    let largest = 0, junk = [];
    for (let round = 0; round < 200; round++) {
      for (let i = 0; i < 20000; i++) junk.push({ round, i, s: "x" + i });
      if (junk.length > 200000) junk = [];
      largest = Math.max(largest, process.memoryUsage().heapTotal);
    }
    console.log(largest, live.length);`;
  const out = execFileSync(process.execPath, [...flags, "--input-type=module", "-e", script], { encoding: "utf8" });
  return Number(out.split(" ")[0]);
}

describe("limitHeapGrowth", () => {
  it("keeps the heap of a process that makes garbage well below what V8 lets it grow to", () => {
    const own = largestHeap(false);
    const limited = largestHeap(true);
    expect(limited).toBeLessThan(own * 0.75);
  });

  it("leaves a process started with its own growth setting as it was started", () => {
    const own = largestHeap(false);
    const started = largestHeap(true, ["--heap-growing-percent=300"]);
    expect(started).toBeGreaterThan(own * 0.75);
  });
});
