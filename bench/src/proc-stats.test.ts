import { spawn, type ChildProcess } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { memoryTogether, rssOf } from "./proc-stats.js";

const mb = 1024 * 1024;
let idle: ChildProcess[] = [];

/** Two Node processes that wait without allocating: their memory stays put between reads. */
beforeAll(async () => {
  idle = [0, 1].map(() => spawn(process.execPath, ["-e", "setInterval(() => {}, 1000); process.stdout.write('up')"], { stdio: ["ignore", "pipe", "ignore"] }));
  await Promise.all(idle.map((child) => new Promise((resolve) => child.stdout!.once("data", resolve))));
});

afterAll(() => {
  for (const child of idle) child.kill();
});

describe("memoryTogether", () => {
  it("is a single process's RSS", () => {
    const pid = idle[0]!.pid!;
    expect(Math.abs(memoryTogether([pid]) - rssOf(pid))).toBeLessThan(mb);
  });

  it("counts the node binary's pages of several processes once", () => {
    const pids = idle.map((child) => child.pid!);
    const rss = pids.map(rssOf);
    const together = memoryTogether(pids);
    expect(together).toBeGreaterThanOrEqual(Math.max(...rss) - mb);
    // Each maps tens of megabytes of the node binary; summing their RSS counts those pages twice.
    expect(together).toBeLessThan(rss[0]! + rss[1]! - 10 * mb);
  });

  it("is zero for processes that are gone", () => {
    expect(memoryTogether([2 ** 22 + 1])).toBe(0);
  });
});
