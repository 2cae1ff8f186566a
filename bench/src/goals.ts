import { apiNames, promptSizes, type Dialect, type PromptSize } from "./plans.js";

/** The figures of one row of the comparison that the goals read. */
export interface GoalRow {
  target: string;
  /** `chat`, `responses`, `messages` or `embeddings`; a row without one is chat's. */
  dialect?: string | undefined;
  mode: string;
  concurrency: number;
  /** A chat row's prompt size (`64k`, `256k`); a row without one sent the one-message body. */
  prompt?: string | undefined;
  cpu_ms_per_request: number;
  added_p50_ms?: number | undefined;
  added_ttfb_p50_ms?: number | undefined;
  /** The largest summed RSS of the target's processes during the row's slots, in MB. */
  peak_rss_mb?: number | undefined;
  /** The largest memory the target's processes took together during the row's slots (the pages of the files they map once), in MB. */
  peak_memory_mb?: number | undefined;
  /** Requests of the row's slots that failed; its other figures cover only those that were answered. */
  errors?: number | undefined;
  /**
   * A row of another dialect than chat: the CPU per request of the chat completions (one message, the same
   * mode and concurrency) sent to the same target in the same rounds as its own requests, and the number of
   * them that failed. What the row's CPU is held against.
   */
  chat_cpu_ms_per_request?: number | undefined;
  chat_errors?: number | undefined;
}

/** One performance goal of the comparison, as measured in this run; `met` is undefined when a row it needs did not run. */
export interface GoalCheck {
  goal: string;
  measured: string;
  met: boolean | undefined;
}

const fixed = (n: number) => n.toFixed(3);
const dialectOf = (row: GoalRow) => row.dialect ?? "chat";
/** The row of a target, mode, concurrency, dialect and prompt size (undefined: the one-message body). */
const find = (rows: readonly GoalRow[], target: string, mode: string, concurrency: number, dialect = "chat", prompt?: string) =>
  rows.find((r) => r.target === target && r.mode === mode && r.concurrency === concurrency && dialectOf(r) === dialect && r.prompt === prompt);

/** A row's plan as the goals print it: `stream:10`, `responses:buffered:10`, `buffered:10:64k`. */
const planOf = (row: GoalRow) => [...(dialectOf(row) === "chat" ? [] : [dialectOf(row)]), row.mode, row.concurrency, ...(row.prompt ? [row.prompt] : [])].join(":");

/**
 * A goal judged only on rows without failed requests: a failure of the judged target's own rows fails the
 * goal (a gateway that drops requests is not cheap), one of a reference row (Portkey's, direct's) leaves it
 * not measured; otherwise `check` judges the figures.
 */
function unlessFailed(goal: string, own: readonly (GoalRow | undefined)[], reference: readonly (GoalRow | undefined)[], check: () => GoalCheck): GoalCheck {
  const failed = (rows: readonly (GoalRow | undefined)[]) =>
    rows.flatMap((row) => (row?.errors ? [`${row.target} ${planOf(row)}: ${row.errors} failed requests`] : [])).join("; ");
  const ownFailed = failed(own);
  if (ownFailed) return { goal, measured: ownFailed, met: false };
  const referenceFailed = failed(reference);
  return referenceFailed ? { goal, measured: `not measured (${referenceFailed})`, met: undefined } : check();
}

/**
 * The most a request of another dialect (Responses, Messages) may cost in CPU against a chat completion of the
 * same target, mode and concurrency.
 */
export const dialectCpuLimit = 1.1;

/** The most an embeddings request (16 inputs) may cost in CPU against a buffered chat completion of the same target at c=10. */
export const embeddingsCpuLimit = 1;

/** The dialects held to chat's CPU per request, in the order their goals are printed, each with its limit and modes. */
export const cpuComparedDialects: readonly { dialect: Exclude<Dialect, "chat">; limit: number; modes: readonly ("buffered" | "stream")[] }[] = [
  { dialect: "responses", limit: dialectCpuLimit, modes: ["buffered", "stream"] },
  { dialect: "messages", limit: dialectCpuLimit, modes: ["buffered", "stream"] },
  { dialect: "embeddings", limit: embeddingsCpuLimit, modes: ["buffered"] },
];

/** A limit against chat's CPU as the goal names it: `within 10% of chat's`, `at most chat's`. */
const limitText = (limit: number) => (limit === 1 ? "at most chat's" : `within ${Math.round((limit - 1) * 100)}% of chat's`);

/**
 * A non-chat row's CPU per request against the chat completions measured in its rounds (its
 * `chat_cpu_ms_per_request`), as a fraction (0.04 is 4% more); undefined for chat rows and rows without them.
 */
export function cpuVsChat(row: GoalRow): number | undefined {
  const chat = row.chat_cpu_ms_per_request ?? 0;
  return dialectOf(row) === "chat" || chat <= 0 ? undefined : row.cpu_ms_per_request / chat - 1;
}

/**
 * A standalone row's CPU per request against the `baseline` row of the same plan (another build, measured in
 * the same run), as a fraction (-0.08 is 8% less); undefined for other rows and when no baseline ran.
 */
export function cpuVsBaseline(row: GoalRow, rows: readonly GoalRow[]): number | undefined {
  if (row.target !== "standalone") return undefined;
  const baseline = find(rows, "baseline", row.mode, row.concurrency, dialectOf(row), row.prompt);
  if (!baseline || baseline.cpu_ms_per_request <= 0) return undefined;
  return row.cpu_ms_per_request / baseline.cpu_ms_per_request - 1;
}

/** `+4.0%`, `-12.3%`: a fraction from `cpuVsChat` as printed (one decimal, so `+10.3%` does not read as within 10%). */
export const signedPercent = (fraction: number) => {
  const percent = Math.round(fraction * 1000) / 10;
  return `${percent >= 0 ? "+" : ""}${percent.toFixed(1)}%`;
};

/** The six chat plans of the default one-message body whose CPU against Portkey's is judged as a geometric mean. */
export const geomeanPlans: readonly { mode: "buffered" | "stream"; concurrency: number }[] = [
  { mode: "buffered", concurrency: 1 },
  { mode: "buffered", concurrency: 10 },
  { mode: "buffered", concurrency: 50 },
  { mode: "stream", concurrency: 1 },
  { mode: "stream", concurrency: 10 },
  { mode: "stream", concurrency: 50 },
];

/** The geometric mean of positive numbers: the n-th root of their product, taken as the mean of their logarithms. */
export const geometricMean = (values: readonly number[]) => Math.exp(values.reduce((sum, value) => sum + Math.log(value), 0) / values.length);

/** The limits of the goals against Portkey and of added latency. */
export const limits = {
  /** Standalone's CPU per request against Portkey's: the geometric mean over `geomeanPlans`, and each plan's. */
  standaloneCpuGeomean: 1 / 3,
  standaloneCpuEach: 0.5,
  /** The topology's CPU per request against Portkey's, the geometric mean over `geomeanPlans`. */
  topologyCpuGeomean: 0.5,
  /** The memory the topology's processes take together at their peak (`memoryOf`) against Portkey's. */
  topologyMemory: 3,
  /** Milliseconds standalone adds at p50 (buffered, c=1), and to the first streamed byte (c=1), and the topology's. */
  standaloneAddedP50Ms: 0.5,
  standaloneAddedTtfbMs: 0.75,
  topologyAddedTtfbMs: 1.5,
  /** Standalone's CPU per request against Portkey's on each large conversation (buffered, c=10). */
  standaloneCpuLargePrompt: 0.5,
};

/** A share as the goals name it: `1/3`, `1/2`, `3×`. */
const share = (fraction: number) => (fraction >= 1 ? `${fraction}×` : `1/${Math.round(1 / fraction)}`);

/**
 * The comparison's performance goals, judged on the rows of one run (and the RSS each target had once it had
 * started, before its first measured request, in MB by target name):
 * - CPU per request against Portkey's over the six chat plans of the default body (buffered and streamed at
 *   c=1, 10 and 50), as their geometric mean: standalone's at most 1/3, none of the six above 1/2; the
 *   topology's at most 1/2.
 * - Memory: standalone's peak RSS (the largest over its rows) at most Portkey's, and its RSS after its first
 *   start on an empty data directory at most Portkey's after start; the topology's processes together at most
 *   3× Portkey's peak.
 * - Added latency against direct calls at c=1: standalone's p50 (buffered) under 0.5 ms; the time to the
 *   first streamed byte under 0.75 ms for standalone and 1.5 ms for the topology.
 * - For each of the Responses and Messages APIs, standalone's and the topology's CPU per request at c=10,
 *   buffered and streamed, within 10% of chat's; and their embeddings CPU per request at c=10 (buffered, the
 *   only mode) at most chat's. Chat's is that of the chat requests measured in the same rounds
 *   (`chat_cpu_ms_per_request`), not the chat plan's row.
 * - Standalone's CPU per request at most 1/2 of Portkey's on each large conversation (64k and 256k, buffered,
 *   c=10).
 * A goal a row of which did not run is not measured. A goal is not met when a row of its target had failed
 * requests, and not measured when a row it is compared with (Portkey's, direct's) had.
 */
export function checkGoals(rows: readonly GoalRow[], startRssMb: Readonly<Partial<Record<string, number>>> = {}): GoalCheck[] {
  const chat = (target: string, mode: "buffered" | "stream", concurrency: number, prompt?: string) => find(rows, target, mode, concurrency, "chat", prompt);
  const unmeasured = (goal: string): GoalCheck => ({ goal, measured: "not measured", met: undefined });

  const cpuGeomean = (target: string, most: number, each?: number): GoalCheck => {
    const goal =
      `${target} CPU per request at most ${share(most)} of Portkey's${each === undefined ? "" : `, none above ${each}`}` +
      " (geomean of chat buffered and stream, c=1, 10, 50)";
    const plans = geomeanPlans.map(({ mode, concurrency }) => ({ plan: `${mode}:${concurrency}`, own: chat(target, mode, concurrency), portkey: chat("portkey", mode, concurrency) }));
    return unlessFailed(goal, plans.map((p) => p.own), plans.map((p) => p.portkey), () => {
      const ratios = plans.map(({ plan, own, portkey }) =>
        own && portkey && portkey.cpu_ms_per_request > 0 ? { plan, ratio: own.cpu_ms_per_request / portkey.cpu_ms_per_request } : undefined,
      );
      const measured = ratios.filter((r) => r !== undefined);
      if (measured.length < ratios.length) return unmeasured(goal);
      const mean = geometricMean(measured.map((r) => r.ratio));
      const largest = measured.reduce((a, b) => (b.ratio > a.ratio ? b : a));
      return {
        goal,
        measured: `${mean.toFixed(2)} (geomean of ${measured.length} plans; largest ${largest.ratio.toFixed(2)} at ${largest.plan})`,
        met: mean <= most && (each === undefined || largest.ratio <= each),
      };
    });
  };

  const peakOf = (target: string, figure: "peak_rss_mb" | "peak_memory_mb") => {
    const own = rows.filter((r) => r.target === target && r[figure] !== undefined);
    return own.length ? Math.max(...own.map((r) => r[figure]!)) : undefined;
  };
  const peakRss = (target: string) => peakOf(target, "peak_rss_mb");
  const rssShare = (goal: string, own: number | undefined, base: number | undefined, most: number, note = ""): GoalCheck => {
    if (own === undefined || base === undefined || base <= 0) return unmeasured(goal);
    const ratio = own / base;
    return { goal, measured: `${own.toFixed(1)} vs ${base.toFixed(1)} MB = ${ratio.toFixed(2)}${note}`, met: ratio <= most };
  };
  /** The topology's processes together against Portkey's one process, whose memory together is its RSS; the summed RSS beside it. */
  const topologyMemory = (goal: string): GoalCheck => {
    const summed = peakRss("topology");
    return rssShare(goal, peakOf("topology", "peak_memory_mb"), peakRss("portkey"), limits.topologyMemory, summed === undefined ? "" : ` (RSS summed over the processes ${summed.toFixed(1)} MB)`);
  };

  /** An added time of a target's chat row at c=1, against direct's row of the same mode. */
  const under = (goal: string, target: string, mode: "buffered" | "stream", figure: "added_p50_ms" | "added_ttfb_p50_ms", limit: number): GoalCheck => {
    const own = chat(target, mode, 1);
    return unlessFailed(goal, [own], [chat("direct", mode, 1)], () => {
      const value = own?.[figure];
      return value === undefined ? unmeasured(goal) : { goal, measured: `${fixed(value)} ms`, met: value < limit };
    });
  };

  const dialectCpu = (dialect: Exclude<Dialect, "chat">, limit: number, target: string, mode: "buffered" | "stream"): GoalCheck => {
    const goal = `${target} ${apiNames[dialect]} CPU per request ${limitText(limit)} (${mode}, c=10)`;
    const own = find(rows, target, mode, 10, dialect);
    // The chat requests it is held against went to the same target: their failures fail the goal too.
    if (own?.chat_errors) return { goal, measured: `${target} ${planOf(own)}: ${own.chat_errors} failed chat requests`, met: false };
    return unlessFailed(goal, [own], [], () => {
      const base = own?.chat_cpu_ms_per_request;
      if (!own || !base || base <= 0) return unmeasured(goal);
      const ratio = own.cpu_ms_per_request / base;
      return { goal, measured: `${fixed(own.cpu_ms_per_request)} vs ${fixed(base)} ms = ${signedPercent(ratio - 1)}`, met: ratio <= limit };
    });
  };

  const largePromptCpu = (prompt: PromptSize): GoalCheck => {
    const most = limits.standaloneCpuLargePrompt;
    const goal = `standalone CPU per request at most ${share(most)} of Portkey's (${prompt} prompt, buffered, c=10)`;
    const own = chat("standalone", "buffered", 10, prompt);
    const portkey = chat("portkey", "buffered", 10, prompt);
    return unlessFailed(goal, [own], [portkey], () => {
      if (!own || !portkey || portkey.cpu_ms_per_request <= 0) return unmeasured(goal);
      const ratio = own.cpu_ms_per_request / portkey.cpu_ms_per_request;
      return { goal, measured: `${fixed(own.cpu_ms_per_request)} vs ${fixed(portkey.cpu_ms_per_request)} ms = ${ratio.toFixed(2)}`, met: ratio <= most };
    });
  };

  return [
    cpuGeomean("standalone", limits.standaloneCpuGeomean, limits.standaloneCpuEach),
    cpuGeomean("topology", limits.topologyCpuGeomean),
    rssShare("standalone peak RSS at most Portkey's (the largest of each one's rows)", peakRss("standalone"), peakRss("portkey"), 1),
    rssShare("standalone RSS after its first start (empty data directory) at most Portkey's after start", startRssMb.standalone, startRssMb.portkey, 1),
    topologyMemory(`topology processes' peak memory together (the node binary's pages once) at most ${share(limits.topologyMemory)} Portkey's`),
    under(`standalone adds under ${limits.standaloneAddedP50Ms} ms at p50 (buffered, c=1)`, "standalone", "buffered", "added_p50_ms", limits.standaloneAddedP50Ms),
    under(`standalone adds under ${limits.standaloneAddedTtfbMs} ms to the first streamed byte (c=1)`, "standalone", "stream", "added_ttfb_p50_ms", limits.standaloneAddedTtfbMs),
    under(`topology adds under ${limits.topologyAddedTtfbMs} ms to the first streamed byte (c=1)`, "topology", "stream", "added_ttfb_p50_ms", limits.topologyAddedTtfbMs),
    ...cpuComparedDialects.flatMap(({ dialect, limit, modes }) =>
      ["standalone", "topology"].flatMap((target) => modes.map((mode) => dialectCpu(dialect, limit, target, mode))),
    ),
    ...(Object.keys(promptSizes) as PromptSize[]).map(largePromptCpu),
  ];
}

/** `met`, `not met` or `not measured`, for the printed table. */
export const verdict = (check: GoalCheck) => (check.met === undefined ? "not measured" : check.met ? "met" : "not met");
