import { describe, expect, it } from "vitest";
import { checkGoals, verdict, type GoalRow } from "./goals.js";

const rows = (overrides: Partial<Record<string, Partial<GoalRow>>> = {}): GoalRow[] => {
  const base: GoalRow[] = [
    { target: "portkey", mode: "buffered", concurrency: 10, cpu_ms_per_request: 1.0 },
    { target: "standalone", mode: "buffered", concurrency: 10, cpu_ms_per_request: 0.45 },
    { target: "topology", mode: "buffered", concurrency: 10, cpu_ms_per_request: 0.9 },
    { target: "standalone", mode: "buffered", concurrency: 1, cpu_ms_per_request: 0.7, added_p50_ms: 0.6 },
    { target: "standalone", mode: "stream", concurrency: 1, cpu_ms_per_request: 0.9, added_ttfb_p50_ms: 0.9 },
    { target: "topology", mode: "stream", concurrency: 1, cpu_ms_per_request: 2.5, added_ttfb_p50_ms: 1.8 },
  ];
  return base.map((r) => ({ ...r, ...overrides[`${r.target} ${r.mode} ${r.concurrency}`] }));
};

describe("performance goals", () => {
  it("are all met when every figure is inside its limit", () => {
    const checks = checkGoals(rows());
    expect(checks.map(verdict)).toEqual(["met", "met", "met", "met", "met"]);
    expect(checks[0]!.measured).toBe("0.450 vs 1.000 ms = 0.45");
  });

  it("judges CPU against Portkey's in the same run, so a slower Portkey does not hide a slower gateway", () => {
    const checks = checkGoals(rows({ "standalone buffered 10": { cpu_ms_per_request: 0.55 }, "topology buffered 10": { cpu_ms_per_request: 1.01 } }));
    expect(checks.slice(0, 2).map(verdict)).toEqual(["not met", "not met"]);
  });

  it("takes a limit of latency as exclusive and a share of CPU as inclusive", () => {
    const checks = checkGoals(rows({ "standalone buffered 10": { cpu_ms_per_request: 0.5 }, "standalone buffered 1": { added_p50_ms: 1 }, "topology stream 1": { added_ttfb_p50_ms: 2 } }));
    expect(checks.map(verdict)).toEqual(["met", "met", "not met", "met", "not met"]);
  });

  it("says a goal was not measured when its rows did not run", () => {
    const checks = checkGoals(rows().filter((r) => r.target !== "portkey" && !(r.target === "topology" && r.mode === "stream")));
    expect(checks.map(verdict)).toEqual(["not measured", "not measured", "met", "met", "not measured"]);
  });
});
