import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { memoryOf, rssOf } from "./proc-stats.js";

/** The kernel's own figure of a process's resident memory, in bytes. */
const vmRss = (pid: number) => Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) * 1024;

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

describe("memoryOf", () => {
  it("is a single process's RSS, both summed and together", () => {
    const pid = idle[0]!.pid!;
    const { rss, together } = memoryOf([pid]);
    expect(Math.abs(rss - vmRss(pid))).toBeLessThan(mb);
    expect(Math.abs(rssOf(pid) - vmRss(pid))).toBeLessThan(mb);
    expect(together).toBe(rss);
  });

  it("counts the node binary's pages of several processes once", () => {
    const pids = idle.map((child) => child.pid!);
    const each = pids.map(vmRss);
    const { rss, together } = memoryOf(pids);
    expect(Math.abs(rss - each[0]! - each[1]!)).toBeLessThan(mb);
    expect(together).toBeGreaterThanOrEqual(Math.max(...each) - mb);
    // Each maps tens of megabytes of the node binary; summing their RSS counts those pages twice.
    expect(together).toBeLessThan(rss - 10 * mb);
  });

  it("is zero for processes that are gone", () => {
    expect(memoryOf([2 ** 22 + 1])).toEqual({ rss: 0, together: 0 });
  });
});
