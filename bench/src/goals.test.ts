import { describe, expect, it } from "vitest";
import { checkGoals, cpuVsChat, signedPercent, verdict, type GoalRow } from "./goals.js";

const rows = (overrides: Partial<Record<string, Partial<GoalRow>>> = {}): GoalRow[] => {
  const base: GoalRow[] = [
    { target: "portkey", mode: "buffered", concurrency: 10, cpu_ms_per_request: 1.0 },
    { target: "standalone", mode: "buffered", concurrency: 10, cpu_ms_per_request: 0.45 },
    { target: "topology", mode: "buffered", concurrency: 10, cpu_ms_per_request: 0.9 },
    { target: "standalone", mode: "buffered", concurrency: 1, cpu_ms_per_request: 0.7, added_p50_ms: 0.6 },
    { target: "standalone", mode: "stream", concurrency: 1, cpu_ms_per_request: 0.9, added_ttfb_p50_ms: 0.9 },
    { target: "topology", mode: "stream", concurrency: 1, cpu_ms_per_request: 2.5, added_ttfb_p50_ms: 1.8 },
    { target: "standalone", mode: "stream", concurrency: 10, cpu_ms_per_request: 0.6 },
    { target: "topology", mode: "stream", concurrency: 10, cpu_ms_per_request: 1.5 },
    { target: "standalone", dialect: "responses", mode: "buffered", concurrency: 10, cpu_ms_per_request: 0.468 },
    { target: "standalone", dialect: "responses", mode: "stream", concurrency: 10, cpu_ms_per_request: 0.63 },
    { target: "topology", dialect: "responses", mode: "buffered", concurrency: 10, cpu_ms_per_request: 0.99 },
    { target: "topology", dialect: "responses", mode: "stream", concurrency: 10, cpu_ms_per_request: 1.5 },
    { target: "standalone", dialect: "messages", mode: "buffered", concurrency: 10, cpu_ms_per_request: 0.432 },
    { target: "standalone", dialect: "messages", mode: "stream", concurrency: 10, cpu_ms_per_request: 0.66 },
    { target: "topology", dialect: "messages", mode: "buffered", concurrency: 10, cpu_ms_per_request: 0.9 },
    { target: "topology", dialect: "messages", mode: "stream", concurrency: 10, cpu_ms_per_request: 1.2 },
    { target: "standalone", dialect: "embeddings", mode: "buffered", concurrency: 10, cpu_ms_per_request: 0.405 },
    { target: "topology", dialect: "embeddings", mode: "buffered", concurrency: 10, cpu_ms_per_request: 0.9 },
  ];
  return base.map((r) => ({ ...r, ...overrides[`${r.target} ${r.dialect ? `${r.dialect} ` : ""}${r.mode} ${r.concurrency}`] }));
};
const allMet = Array<string>(15).fill("met");

describe("performance goals", () => {
  it("are all met when every figure is inside its limit", () => {
    const checks = checkGoals(rows());
    expect(checks.map(verdict)).toEqual(allMet);
    expect(checks[0]!.measured).toBe("0.450 vs 1.000 ms = 0.45");
    expect(checks[5]!.measured).toBe("0.468 vs 0.450 ms = +4.0%");
    expect(checks[9]!.measured).toBe("0.432 vs 0.450 ms = -4.0%");
    expect(checks[13]!.measured).toBe("0.405 vs 0.450 ms = -10.0%");
    expect(checks[14]!.measured).toBe("0.900 vs 0.900 ms = +0.0%");
  });

  it("judges CPU against Portkey's in the same run, so a slower Portkey does not hide a slower gateway", () => {
    const checks = checkGoals(rows({ "standalone buffered 10": { cpu_ms_per_request: 0.55 }, "topology buffered 10": { cpu_ms_per_request: 1.01 } }));
    expect(checks.slice(0, 2).map(verdict)).toEqual(["not met", "not met"]);
  });

  it("takes a limit of latency as exclusive and a share of CPU as inclusive", () => {
    const checks = checkGoals(rows({ "standalone buffered 10": { cpu_ms_per_request: 0.5 }, "standalone buffered 1": { added_p50_ms: 1 }, "topology stream 1": { added_ttfb_p50_ms: 2 } }));
    expect(checks.slice(0, 5).map(verdict)).toEqual(["met", "met", "not met", "met", "not met"]);
  });

  it("says a goal was not measured when its rows did not run", () => {
    const checks = checkGoals(rows().filter((r) => r.target !== "portkey" && !(r.target === "topology" && r.mode === "stream")));
    expect(checks.slice(0, 5).map(verdict)).toEqual(["not measured", "not measured", "met", "met", "not measured"]);
  });

  it("judges chat's goals on chat rows even when a Responses row of the same mode and concurrency comes first", () => {
    const responsesFirst = [{ target: "standalone", dialect: "responses", mode: "buffered", concurrency: 10, cpu_ms_per_request: 5 }, ...rows()];
    expect(checkGoals(responsesFirst)[0]!.measured).toBe("0.450 vs 1.000 ms = 0.45");
  });

  it("holds Responses to at most 10% more CPU per request than chat's, of the same target, mode and concurrency", () => {
    const checks = checkGoals(rows({ "standalone responses stream 10": { cpu_ms_per_request: 0.66 }, "topology responses buffered 10": { cpu_ms_per_request: 0.991 } }));
    expect(checks.slice(5, 9).map(verdict)).toEqual(["met", "met", "not met", "met"]);
    expect(checks.slice(5, 9).map((c) => c.goal)).toEqual([
      "standalone Responses CPU per request within 10% of chat's (buffered, c=10)",
      "standalone Responses CPU per request within 10% of chat's (stream, c=10)",
      "topology Responses CPU per request within 10% of chat's (buffered, c=10)",
      "topology Responses CPU per request within 10% of chat's (stream, c=10)",
    ]);
  });

  it("says a Responses goal was not measured without its Responses row or its chat row", () => {
    const checks = checkGoals(rows().filter((r) => !(r.target === "standalone" && r.mode === "stream" && r.concurrency === 10 && !r.dialect) && !(r.target === "topology" && r.dialect)));
    expect(checks.slice(5, 9).map(verdict)).toEqual(["met", "not measured", "not measured", "not measured"]);
  });

  it("holds Messages to the same limit against chat, with goals of its own after the Responses ones", () => {
    const checks = checkGoals(rows({ "standalone messages buffered 10": { cpu_ms_per_request: 0.4951 }, "topology messages stream 10": { cpu_ms_per_request: 1.65 } }));
    expect(checks.slice(5, 9).map(verdict)).toEqual(["met", "met", "met", "met"]);
    expect(checks.slice(9, 13).map(verdict)).toEqual(["not met", "met", "met", "met"]);
    expect(checks[9]!.measured).toBe("0.495 vs 0.450 ms = +10.0%");
    expect(checks.slice(9, 13).map((c) => c.goal)).toEqual([
      "standalone Messages CPU per request within 10% of chat's (buffered, c=10)",
      "standalone Messages CPU per request within 10% of chat's (stream, c=10)",
      "topology Messages CPU per request within 10% of chat's (buffered, c=10)",
      "topology Messages CPU per request within 10% of chat's (stream, c=10)",
    ]);
  });

  it("says a Messages goal was not measured without its Messages row, whatever the Responses rows", () => {
    const checks = checkGoals(rows().filter((r) => !(r.dialect === "messages" && r.mode === "stream")));
    expect(checks.slice(5, 9).map(verdict)).toEqual(["met", "met", "met", "met"]);
    expect(checks.slice(9, 13).map(verdict)).toEqual(["met", "not measured", "met", "not measured"]);
  });

  it("holds embeddings to at most chat's CPU per request, buffered at c=10 only, with goals of their own after the Messages ones", () => {
    const checks = checkGoals(rows({ "standalone embeddings buffered 10": { cpu_ms_per_request: 0.46 } }));
    expect(checks.slice(0, 13).map(verdict)).toEqual(Array<string>(13).fill("met"));
    expect(checks.slice(13).map((c) => c.goal)).toEqual([
      "standalone Embeddings CPU per request at most chat's (buffered, c=10)",
      "topology Embeddings CPU per request at most chat's (buffered, c=10)",
    ]);
    expect(checks.slice(13).map(verdict)).toEqual(["not met", "met"]);
    expect(checks[13]!.measured).toBe("0.460 vs 0.450 ms = +2.2%");
    expect(checks).toHaveLength(15);
  });

  it("judges embeddings against chat's buffered row, not the streamed one, and says not measured without either row", () => {
    const cheaperStream = checkGoals(rows({ "topology stream 10": { cpu_ms_per_request: 0.5 } }));
    expect(verdict(cheaperStream[14]!)).toBe("met");
    const dearerBuffered = checkGoals(rows({ "topology buffered 10": { cpu_ms_per_request: 0.899 } }));
    expect(verdict(dearerBuffered[14]!)).toBe("not met");
    const withoutEmbeddings = checkGoals(rows().filter((r) => !(r.target === "standalone" && r.dialect === "embeddings")));
    expect(withoutEmbeddings.slice(13).map(verdict)).toEqual(["not measured", "met"]);
    const withoutChat = checkGoals(rows().filter((r) => !(r.target === "topology" && r.mode === "buffered" && r.concurrency === 10 && !r.dialect)));
    expect(withoutChat.slice(13).map(verdict)).toEqual(["met", "not measured"]);
  });
});

describe("CPU against chat", () => {
  it("compares a Responses row with the same target's chat row of its mode and concurrency", () => {
    const all = rows();
    const responses = all.find((r) => r.target === "topology" && r.dialect === "responses" && r.mode === "buffered")!;
    expect(cpuVsChat(responses, all)).toBeCloseTo(0.1, 9);
    expect(signedPercent(cpuVsChat(responses, all)!)).toBe("+10.0%");
  });

  it("compares a Messages row with chat's the same way", () => {
    const all = rows();
    const messages = all.find((r) => r.target === "topology" && r.dialect === "messages" && r.mode === "stream")!;
    expect(signedPercent(cpuVsChat(messages, all)!)).toBe("-20.0%");
  });

  it("compares an embeddings row with the same target's buffered chat row", () => {
    const all = rows();
    const embeddings = all.find((r) => r.target === "standalone" && r.dialect === "embeddings")!;
    expect(signedPercent(cpuVsChat(embeddings, all)!)).toBe("-10.0%");
  });

  it("has no figure for chat rows or without the chat row", () => {
    const all = rows();
    expect(cpuVsChat(all[0]!, all)).toBeUndefined();
    const alone = all.filter((r) => !(r.target === "standalone" && r.mode === "buffered" && r.concurrency === 10 && !r.dialect));
    expect(cpuVsChat(alone.find((r) => r.target === "standalone" && r.dialect === "responses" && r.mode === "buffered")!, alone)).toBeUndefined();
  });

  it("prints a sign and one decimal of a percent", () => {
    expect([0.04, -0.123, 0, -0.0004, 0.1, 0.1034].map(signedPercent)).toEqual(["+4.0%", "-12.3%", "+0.0%", "+0.0%", "+10.0%", "+10.3%"]);
  });
});
