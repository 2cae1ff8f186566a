import { describe, expect, it } from "vitest";
import { checkGoals, cpuVsBaseline, cpuVsChat, geometricMean, signedPercent, verdict, type GoalRow } from "./goals.js";

/** Chat rows of the one-message body: each target's CPU per request at (mode, concurrency). */
const chatCpu: Record<string, Record<string, number>> = {
  portkey: { "buffered 1": 2.0, "buffered 10": 2.0, "buffered 50": 2.0, "stream 1": 3.0, "stream 10": 3.0, "stream 50": 3.0 },
  // 0.30, 0.225, 0.30, 0.30, 0.20, 0.30 of Portkey's: a geometric mean of 0.267
  standalone: { "buffered 1": 0.6, "buffered 10": 0.45, "buffered 50": 0.6, "stream 1": 0.9, "stream 10": 0.6, "stream 50": 0.9 },
  // 0.40, 0.45, 0.40, 0.40, 0.50, 0.40 of Portkey's: a geometric mean of 0.423
  topology: { "buffered 1": 0.8, "buffered 10": 0.9, "buffered 50": 0.8, "stream 1": 1.2, "stream 10": 1.5, "stream 50": 1.2 },
};
const peakRss: Record<string, number> = { portkey: 200, standalone: 190, topology: 860 };
/** The memory the processes took together: a single process's RSS, and less than the summed RSS of the topology's. */
const peakMemory: Record<string, number> = { ...peakRss, topology: 580 };
const startRss = { standalone: 60, portkey: 70, topology: 300 };

const rows = (overrides: Partial<Record<string, Partial<GoalRow>>> = {}): GoalRow[] => {
  const chat: GoalRow[] = Object.entries(chatCpu).flatMap(([target, cpu]) =>
    Object.entries(cpu).map(([plan, cpu_ms_per_request], i) => {
      const [mode, concurrency] = plan.split(" ");
      // Each target's largest peaks are in its second row.
      const less = i === 1 ? 0 : 10;
      return { target, mode: mode!, concurrency: Number(concurrency), cpu_ms_per_request, peak_rss_mb: peakRss[target]! - less, peak_memory_mb: peakMemory[target]! - less };
    }),
  );
  const latency: Record<string, Partial<GoalRow>> = {
    "standalone buffered 1": { added_p50_ms: 0.4 },
    "standalone stream 1": { added_ttfb_p50_ms: 0.6 },
    "topology stream 1": { added_ttfb_p50_ms: 1.2 },
  };
  const base: GoalRow[] = [
    ...chat,
    { target: "portkey", mode: "buffered", concurrency: 10, prompt: "64k", cpu_ms_per_request: 4.0 },
    { target: "portkey", mode: "buffered", concurrency: 10, prompt: "256k", cpu_ms_per_request: 12.0 },
    { target: "standalone", mode: "buffered", concurrency: 10, prompt: "64k", cpu_ms_per_request: 1.6 },
    { target: "standalone", mode: "buffered", concurrency: 10, prompt: "256k", cpu_ms_per_request: 6.0 },
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
  const key = (r: GoalRow) => `${r.target} ${r.dialect ? `${r.dialect} ` : ""}${r.mode} ${r.concurrency}${r.prompt ? ` ${r.prompt}` : ""}`;
  // A dialect's row carries the chat requests measured in its rounds: here at the chat row's figure.
  const paired = (r: GoalRow) => (r.dialect ? { chat_cpu_ms_per_request: chatCpu[r.target]![`${r.mode} ${r.concurrency}`], chat_errors: 0 } : {});
  return base.map((r) => ({ ...r, ...paired(r), ...latency[key(r)], ...overrides[key(r)] }));
};
const allMet = Array<string>(20).fill("met");
/** Indices of the goals in the order `checkGoals` gives them. */
const at = { standaloneCpu: 0, topologyCpu: 1, standalonePeakRss: 2, standaloneStartRss: 3, topologyMemory: 4, addedP50: 5, standaloneTtfb: 6, topologyTtfb: 7, responses: 8, messages: 12, embeddings: 16, large: 18 };
const verdicts = (checks: ReturnType<typeof checkGoals>, from: number, count: number) => checks.slice(from, from + count).map(verdict);

describe("performance goals", () => {
  it("are all met when every figure is inside its limit", () => {
    const checks = checkGoals(rows(), startRss);
    expect(checks.map(verdict)).toEqual(allMet);
    expect(checks.map((c) => c.measured)).toEqual([
      "0.27 (geomean of 6 plans; largest 0.30 at buffered:1)",
      "0.42 (geomean of 6 plans; largest 0.50 at stream:10)",
      "190.0 vs 200.0 MB = 0.95",
      "60.0 vs 70.0 MB = 0.86",
      "580.0 vs 200.0 MB = 2.90 (RSS summed over the processes 860.0 MB)",
      "0.400 ms",
      "0.600 ms",
      "1.200 ms",
      "0.468 vs 0.450 ms = +4.0%",
      "0.630 vs 0.600 ms = +5.0%",
      "0.990 vs 0.900 ms = +10.0%",
      "1.500 vs 1.500 ms = +0.0%",
      "0.432 vs 0.450 ms = -4.0%",
      "0.660 vs 0.600 ms = +10.0%",
      "0.900 vs 0.900 ms = +0.0%",
      "1.200 vs 1.500 ms = -20.0%",
      "0.405 vs 0.450 ms = -10.0%",
      "0.900 vs 0.900 ms = +0.0%",
      "1.600 vs 4.000 ms = 0.40",
      "6.000 vs 12.000 ms = 0.50",
    ]);
  });

  it("names each goal with its limit and the rows it reads", () => {
    const goals = checkGoals(rows(), startRss).map((c) => c.goal);
    expect(goals.slice(0, at.responses)).toEqual([
      "standalone CPU per request at most 1/3 of Portkey's, none above 0.5 (geomean of chat buffered and stream, c=1, 10, 50)",
      "topology CPU per request at most 1/2 of Portkey's (geomean of chat buffered and stream, c=1, 10, 50)",
      "standalone peak RSS at most Portkey's (the largest of each one's rows)",
      "standalone RSS after its first start (empty data directory) at most Portkey's after start",
      "topology processes' peak memory together (the node binary's pages once) at most 3× Portkey's",
      "standalone adds under 0.5 ms at p50 (buffered, c=1)",
      "standalone adds under 0.75 ms to the first streamed byte (c=1)",
      "topology adds under 1.5 ms to the first streamed byte (c=1)",
    ]);
    expect(goals.slice(at.large)).toEqual([
      "standalone CPU per request at most 1/2 of Portkey's (64k prompt, buffered, c=10)",
      "standalone CPU per request at most 1/2 of Portkey's (256k prompt, buffered, c=10)",
    ]);
  });
});

describe("CPU against Portkey's over the six chat plans", () => {
  it("takes the geometric mean of the six plans' shares", () => {
    expect(geometricMean([2, 8])).toBeCloseTo(4, 12);
    expect(geometricMean([0.3, 0.225, 0.3, 0.3, 0.2, 0.3])).toBeCloseTo((0.3 ** 4 * 0.225 * 0.2) ** (1 / 6), 12);
    expect(geometricMean([0.5])).toBeCloseTo(0.5, 12);
    // Unlike the arithmetic mean (0.55), one cheap plan does not buy a dear one.
    expect(geometricMean([0.1, 1])).toBeCloseTo(0.316, 3);
  });

  it("is not met when the mean is above 1/3, though no plan is above 0.5", () => {
    const cpu = { "buffered 1": 0.8, "buffered 10": 0.8, "buffered 50": 0.8, "stream 1": 1.2, "stream 10": 1.2, "stream 50": 1.26 };
    const dearer = Object.fromEntries(Object.entries(cpu).map(([plan, ms]) => [`standalone ${plan}`, { cpu_ms_per_request: ms }]));
    const check = checkGoals(rows(dearer), startRss)[at.standaloneCpu]!;
    expect(verdict(check)).toBe("not met");
    expect(check.measured).toBe("0.40 (geomean of 6 plans; largest 0.42 at stream:50)");
  });

  it("is not met when one plan is above 0.5, though the mean is below 1/3", () => {
    const check = checkGoals(rows({ "standalone stream 1": { cpu_ms_per_request: 1.53 } }), startRss)[at.standaloneCpu]!;
    expect(check.measured).toBe("0.29 (geomean of 6 plans; largest 0.51 at stream:1)");
    expect(verdict(check)).toBe("not met");
    const atLimit = checkGoals(rows({ "standalone stream 1": { cpu_ms_per_request: 1.5 } }), startRss)[at.standaloneCpu]!;
    expect(atLimit.measured).toBe("0.29 (geomean of 6 plans; largest 0.50 at stream:1)");
    expect(verdict(atLimit)).toBe("met");
  });

  it("judges the topology on the mean alone, at most 1/2", () => {
    const oneDear = checkGoals(rows({ "topology stream 50": { cpu_ms_per_request: 2.4 } }), startRss)[at.topologyCpu]!;
    expect(oneDear.measured).toBe("0.48 (geomean of 6 plans; largest 0.80 at stream:50)");
    expect(verdict(oneDear)).toBe("met");
    const dearer = checkGoals(rows({ "topology buffered 1": { cpu_ms_per_request: 1.4 }, "topology buffered 50": { cpu_ms_per_request: 1.4 } }), startRss)[at.topologyCpu]!;
    expect(dearer.measured).toBe("0.51 (geomean of 6 plans; largest 0.70 at buffered:1)");
    expect(verdict(dearer)).toBe("not met");
  });

  it("judges CPU against Portkey's in the same run, so a slower Portkey does not hide a slower gateway", () => {
    const slowerPortkey = Object.fromEntries(Object.entries(chatCpu.portkey!).map(([plan, cpu]) => [`portkey ${plan}`, { cpu_ms_per_request: cpu * 0.75 }]));
    expect(verdicts(checkGoals(rows(slowerPortkey), startRss), 0, 2)).toEqual(["not met", "not met"]);
  });

  it("is not measured without one of the six plans of the target or of Portkey", () => {
    const withoutPortkey = checkGoals(rows().filter((r) => !(r.target === "portkey" && r.mode === "stream" && r.concurrency === 50)), startRss);
    expect(verdicts(withoutPortkey, 0, 2)).toEqual(["not measured", "not measured"]);
    expect(withoutPortkey[0]!.measured).toBe("not measured");
    const withoutTopology = checkGoals(rows().filter((r) => !(r.target === "topology" && r.mode === "buffered" && r.concurrency === 50)), startRss);
    expect(verdicts(withoutTopology, 0, 2)).toEqual(["met", "not measured"]);
  });

  it("reads the one-message body's rows, not a large conversation's of the same mode and concurrency", () => {
    const large: GoalRow[] = [
      { target: "standalone", mode: "buffered", concurrency: 10, prompt: "64k", cpu_ms_per_request: 50 },
      { target: "portkey", mode: "buffered", concurrency: 10, prompt: "256k", cpu_ms_per_request: 0.01 },
    ];
    const checks = checkGoals([...large, ...rows()], startRss);
    expect(checks[at.standaloneCpu]!.measured).toBe("0.27 (geomean of 6 plans; largest 0.30 at buffered:1)");
    const onlyLarge = rows().filter((r) => !(r.target === "standalone" && r.mode === "buffered" && r.concurrency === 10 && !r.prompt));
    expect(verdict(checkGoals(onlyLarge, startRss)[at.standaloneCpu]!)).toBe("not measured");
  });
});

describe("memory against Portkey's", () => {
  it("compares the largest peak RSS of each one's rows, inclusive", () => {
    const checks = checkGoals(rows({ "standalone stream 50": { peak_rss_mb: 200 } }), startRss);
    expect(checks[at.standalonePeakRss]!.measured).toBe("200.0 vs 200.0 MB = 1.00");
    expect(verdict(checks[at.standalonePeakRss]!)).toBe("met");
    const larger = checkGoals(rows({ "standalone stream 50": { peak_rss_mb: 201 } }), startRss)[at.standalonePeakRss]!;
    expect(larger.measured).toBe("201.0 vs 200.0 MB = 1.00");
    expect(verdict(larger)).toBe("not met");
    const portkeyLarger = checkGoals(rows({ "portkey stream 1": { peak_rss_mb: 250 } }), startRss)[at.standalonePeakRss]!;
    expect(portkeyLarger.measured).toBe("190.0 vs 250.0 MB = 0.76");
  });

  it("holds standalone's RSS after its first start to Portkey's after start", () => {
    const checks = checkGoals(rows(), { standalone: 650, portkey: 80 });
    expect(checks[at.standaloneStartRss]!.measured).toBe("650.0 vs 80.0 MB = 8.13");
    expect(verdict(checks[at.standaloneStartRss]!)).toBe("not met");
    expect(verdict(checkGoals(rows(), { standalone: 80, portkey: 80 })[at.standaloneStartRss]!)).toBe("met");
  });

  it("holds the memory the topology's processes take together to 3× Portkey's peak, their summed RSS beside it", () => {
    const met = checkGoals(rows({ "topology stream 10": { peak_memory_mb: 600 } }), startRss)[at.topologyMemory]!;
    expect(met.measured).toBe("600.0 vs 200.0 MB = 3.00 (RSS summed over the processes 860.0 MB)");
    expect(verdict(met)).toBe("met");
    const over = checkGoals(rows({ "topology stream 10": { peak_memory_mb: 601 } }), startRss)[at.topologyMemory]!;
    expect(over.measured).toBe("601.0 vs 200.0 MB = 3.00 (RSS summed over the processes 860.0 MB)");
    expect(verdict(over)).toBe("not met");
  });

  it("is not measured without the start figures or either target's rows", () => {
    expect(verdicts(checkGoals(rows()), at.standalonePeakRss, 3)).toEqual(["met", "not measured", "met"]);
    expect(verdicts(checkGoals(rows(), { standalone: 60 }), at.standalonePeakRss, 3)).toEqual(["met", "not measured", "met"]);
    const withoutPortkey = rows().filter((r) => r.target !== "portkey");
    expect(verdicts(checkGoals(withoutPortkey, { standalone: 60 }), at.standalonePeakRss, 3)).toEqual(["not measured", "not measured", "not measured"]);
    const withoutTopology = rows().filter((r) => r.target !== "topology");
    expect(verdicts(checkGoals(withoutTopology, startRss), at.standalonePeakRss, 3)).toEqual(["met", "met", "not measured"]);
  });
});

describe("added latency", () => {
  it("takes a limit of latency as exclusive", () => {
    const atLimits = rows({ "standalone buffered 1": { added_p50_ms: 0.5 }, "standalone stream 1": { added_ttfb_p50_ms: 0.75 }, "topology stream 1": { added_ttfb_p50_ms: 1.5 } });
    expect(verdicts(checkGoals(atLimits, startRss), at.addedP50, 3)).toEqual(["not met", "not met", "not met"]);
    const below = rows({ "standalone buffered 1": { added_p50_ms: 0.499 }, "standalone stream 1": { added_ttfb_p50_ms: 0.749 }, "topology stream 1": { added_ttfb_p50_ms: 1.499 } });
    expect(verdicts(checkGoals(below, startRss), at.addedP50, 3)).toEqual(["met", "met", "met"]);
  });

  it("says a goal was not measured when its rows did not run", () => {
    const checks = checkGoals(rows().filter((r) => !(r.target === "topology" && r.mode === "stream")), startRss);
    expect(verdicts(checks, at.addedP50, 3)).toEqual(["met", "met", "not measured"]);
    const withoutAdded = rows({ "standalone buffered 1": { added_p50_ms: undefined } });
    expect(verdict(checkGoals(withoutAdded, startRss)[at.addedP50]!)).toBe("not measured");
  });
});

describe("large conversations", () => {
  it("hold standalone to at most 1/2 of Portkey's CPU per request on each size, inclusive", () => {
    const checks = checkGoals(rows({ "standalone buffered 10 64k": { cpu_ms_per_request: 2.1 } }), startRss);
    expect(checks[at.large]!.measured).toBe("2.100 vs 4.000 ms = 0.53");
    expect(verdicts(checks, at.large, 2)).toEqual(["not met", "met"]);
    expect(verdicts(checkGoals(rows({ "standalone buffered 10 256k": { cpu_ms_per_request: 6.01 } }), startRss), at.large, 2)).toEqual(["met", "not met"]);
  });

  it("are not measured without the size's row of standalone or of Portkey", () => {
    const withoutPortkey64k = rows().filter((r) => !(r.target === "portkey" && r.prompt === "64k"));
    expect(verdicts(checkGoals(withoutPortkey64k, startRss), at.large, 2)).toEqual(["not measured", "met"]);
    const withoutLarge = rows().filter((r) => !r.prompt);
    expect(verdicts(checkGoals(withoutLarge, startRss), at.large, 2)).toEqual(["not measured", "not measured"]);
    expect(verdicts(checkGoals(withoutLarge, startRss), 0, at.large)).toEqual(allMet.slice(0, at.large));
  });
});

describe("CPU of other dialects against chat's", () => {
  it("judges chat's goals on chat rows even when a Responses row of the same mode and concurrency comes first", () => {
    const responsesFirst = [{ target: "standalone", dialect: "responses", mode: "buffered", concurrency: 10, cpu_ms_per_request: 5 }, ...rows()];
    expect(checkGoals(responsesFirst, startRss)[at.standaloneCpu]!.measured).toBe("0.27 (geomean of 6 plans; largest 0.30 at buffered:1)");
  });

  it("compares with the chat requests measured in the dialect's rounds, not the chat plan's row", () => {
    const chatRowDearer = rows({ "standalone buffered 10": { cpu_ms_per_request: 0.6 }, "standalone responses stream 10": { chat_cpu_ms_per_request: 0.5 } });
    const checks = checkGoals(chatRowDearer, startRss);
    expect(checks[at.responses]!.measured).toBe("0.468 vs 0.450 ms = +4.0%");
    expect(checks[at.responses + 1]).toMatchObject({ measured: "0.630 vs 0.500 ms = +26.0%", met: false });
  });

  it("holds Responses to at most 10% more CPU per request than chat's, of the same target, mode and concurrency", () => {
    const checks = checkGoals(rows({ "standalone responses stream 10": { cpu_ms_per_request: 0.66 }, "topology responses buffered 10": { cpu_ms_per_request: 0.991 } }), startRss);
    expect(verdicts(checks, at.responses, 4)).toEqual(["met", "met", "not met", "met"]);
    expect(checks.slice(at.responses, at.messages).map((c) => c.goal)).toEqual([
      "standalone Responses CPU per request within 10% of chat's (buffered, c=10)",
      "standalone Responses CPU per request within 10% of chat's (stream, c=10)",
      "topology Responses CPU per request within 10% of chat's (buffered, c=10)",
      "topology Responses CPU per request within 10% of chat's (stream, c=10)",
    ]);
  });

  it("says a Responses goal was not measured without its Responses row or its chat figure", () => {
    const withoutChat = rows({ "standalone responses stream 10": { chat_cpu_ms_per_request: undefined } });
    const checks = checkGoals(withoutChat.filter((r) => !(r.target === "topology" && r.dialect)), startRss);
    expect(verdicts(checks, at.responses, 4)).toEqual(["met", "not measured", "not measured", "not measured"]);
  });

  it("holds Messages to the same limit against chat, with goals of its own after the Responses ones", () => {
    const checks = checkGoals(rows({ "standalone messages buffered 10": { cpu_ms_per_request: 0.4951 }, "topology messages stream 10": { cpu_ms_per_request: 1.65 } }), startRss);
    expect(verdicts(checks, at.responses, 4)).toEqual(["met", "met", "met", "met"]);
    expect(verdicts(checks, at.messages, 4)).toEqual(["not met", "met", "met", "met"]);
    expect(checks[at.messages]!.measured).toBe("0.495 vs 0.450 ms = +10.0%");
    expect(checks.slice(at.messages, at.embeddings).map((c) => c.goal)).toEqual([
      "standalone Messages CPU per request within 10% of chat's (buffered, c=10)",
      "standalone Messages CPU per request within 10% of chat's (stream, c=10)",
      "topology Messages CPU per request within 10% of chat's (buffered, c=10)",
      "topology Messages CPU per request within 10% of chat's (stream, c=10)",
    ]);
  });

  it("says a Messages goal was not measured without its Messages row, whatever the Responses rows", () => {
    const checks = checkGoals(rows().filter((r) => !(r.dialect === "messages" && r.mode === "stream")), startRss);
    expect(verdicts(checks, at.responses, 4)).toEqual(["met", "met", "met", "met"]);
    expect(verdicts(checks, at.messages, 4)).toEqual(["met", "not measured", "met", "not measured"]);
  });

  it("holds embeddings to at most chat's CPU per request, buffered at c=10 only, with goals of their own after the Messages ones", () => {
    const checks = checkGoals(rows({ "standalone embeddings buffered 10": { cpu_ms_per_request: 0.46 } }), startRss);
    expect(verdicts(checks, 0, at.embeddings)).toEqual(allMet.slice(0, at.embeddings));
    expect(checks.slice(at.embeddings, at.large).map((c) => c.goal)).toEqual([
      "standalone Embeddings CPU per request at most chat's (buffered, c=10)",
      "topology Embeddings CPU per request at most chat's (buffered, c=10)",
    ]);
    expect(verdicts(checks, at.embeddings, 2)).toEqual(["not met", "met"]);
    expect(checks[at.embeddings]!.measured).toBe("0.460 vs 0.450 ms = +2.2%");
    expect(checks).toHaveLength(20);
  });

  it("judges embeddings against their paired chat figure, and says not measured without the row or the figure", () => {
    const cheaperChat = checkGoals(rows({ "topology embeddings buffered 10": { chat_cpu_ms_per_request: 0.899 } }), startRss);
    expect(cheaperChat[at.embeddings + 1]).toMatchObject({ measured: "0.900 vs 0.899 ms = +0.1%", met: false });
    const withoutEmbeddings = checkGoals(rows().filter((r) => !(r.target === "standalone" && r.dialect === "embeddings")), startRss);
    expect(withoutEmbeddings.slice(at.embeddings, at.large).map(verdict)).toEqual(["not measured", "met"]);
    const withoutChat = checkGoals(rows({ "topology embeddings buffered 10": { chat_cpu_ms_per_request: undefined } }), startRss);
    expect(withoutChat.slice(at.embeddings, at.large).map(verdict)).toEqual(["met", "not measured"]);
  });
});

describe("CPU against chat", () => {
  const dialectRow = (dialect: string, cpu: number, chat: number | undefined): GoalRow => ({ target: "topology", dialect, mode: "buffered", concurrency: 10, cpu_ms_per_request: cpu, chat_cpu_ms_per_request: chat });

  it("compares a dialect's row with the chat requests measured in its rounds", () => {
    expect(cpuVsChat(dialectRow("responses", 0.99, 0.9))).toBeCloseTo(0.1, 9);
    expect(signedPercent(cpuVsChat(dialectRow("messages", 1.2, 1.5))!)).toBe("-20.0%");
    expect(signedPercent(cpuVsChat(dialectRow("embeddings", 0.405, 0.45))!)).toBe("-10.0%");
  });

  it("has no figure for chat rows, or for a row without its chat figure", () => {
    expect(cpuVsChat({ target: "topology", mode: "buffered", concurrency: 10, cpu_ms_per_request: 0.9, chat_cpu_ms_per_request: 0.5 })).toBeUndefined();
    expect(cpuVsChat(dialectRow("responses", 0.99, undefined))).toBeUndefined();
    expect(cpuVsChat(dialectRow("responses", 0.99, 0))).toBeUndefined();
  });

  it("prints a sign and one decimal of a percent", () => {
    expect([0.04, -0.123, 0, -0.0004, 0.1, 0.1034].map(signedPercent)).toEqual(["+4.0%", "-12.3%", "+0.0%", "+0.0%", "+10.0%", "+10.3%"]);
  });
});

describe("standalone against another build of it (baseline)", () => {
  const row = (target: string, cpu: number, extra: Partial<GoalRow> = {}): GoalRow => ({ target, mode: "buffered", concurrency: 10, cpu_ms_per_request: cpu, ...extra });

  it("compares a standalone row with the baseline row of the same plan, dialect and prompt size", () => {
    const all = [row("standalone", 0.46), row("baseline", 0.5), row("standalone", 3, { prompt: "256k" }), row("baseline", 2.4, { prompt: "256k" }), row("baseline", 9, { dialect: "embeddings" })];
    expect(signedPercent(cpuVsBaseline(all[0]!, all)!)).toBe("-8.0%");
    expect(signedPercent(cpuVsBaseline(all[2]!, all)!)).toBe("+25.0%");
  });

  it("has no figure for other targets, or when no baseline row of that plan ran", () => {
    const all = [row("standalone", 0.46), row("topology", 1), row("baseline", 0.5, { concurrency: 1 })];
    expect(cpuVsBaseline(all[0]!, all)).toBeUndefined();
    expect(cpuVsBaseline(all[1]!, [...all, row("baseline", 0.5)])).toBeUndefined();
  });
});

describe("rows with failed requests", () => {
  it("fail the goals of the target whose requests failed, whatever its figures", () => {
    // A stream that ends early is cheap and quick: its figures must not meet a goal.
    const failing = rows({ "standalone stream 1": { errors: 1500, cpu_ms_per_request: 0.01, added_ttfb_p50_ms: -0.2 }, "standalone responses stream 10": { errors: 3 } });
    const checks = checkGoals(failing, startRss);
    expect(checks[at.standaloneCpu]).toMatchObject({ met: false, measured: "standalone stream:1: 1500 failed requests" });
    expect(checks[at.standaloneTtfb]).toMatchObject({ met: false, measured: "standalone stream:1: 1500 failed requests" });
    expect(checks[at.responses + 1]).toMatchObject({ met: false, measured: "standalone responses:stream:10: 3 failed requests" });
    expect(verdict(checks[at.topologyCpu]!)).toBe("met");
  });

  it("fail a dialect's goal when the chat requests it is compared with failed, as they went to the same target", () => {
    const checks = checkGoals(rows({ "topology embeddings buffered 10": { chat_errors: 2 } }), startRss);
    expect(checks[at.embeddings + 1]).toMatchObject({ met: false, measured: "topology embeddings:buffered:10: 2 failed chat requests" });
    expect(verdict(checks[at.topologyCpu]!)).toBe("met");
  });

  it("leave a goal not measured when a row it is compared with failed", () => {
    const checks = checkGoals(rows({ "portkey buffered 10 256k": { errors: 1 } }).concat([{ target: "direct", mode: "stream", concurrency: 1, cpu_ms_per_request: 0.1, errors: 4 }]), startRss);
    expect(checks[at.large + 1]).toMatchObject({ met: undefined, measured: "not measured (portkey buffered:10:256k: 1 failed requests)" });
    expect(checks[at.standaloneTtfb]).toMatchObject({ met: undefined, measured: "not measured (direct stream:1: 4 failed requests)" });
    expect(verdict(checks[at.large]!)).toBe("met");
  });
});
