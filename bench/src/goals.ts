import { apiNames, type Dialect } from "./plans.js";

/** The figures of one row of the comparison that the goals read. */
export interface GoalRow {
  target: string;
  /** `chat`, `responses`, `messages` or `embeddings`; a row without one is chat's. */
  dialect?: string | undefined;
  mode: string;
  concurrency: number;
  cpu_ms_per_request: number;
  added_p50_ms?: number | undefined;
  added_ttfb_p50_ms?: number | undefined;
}

/** One performance goal of the comparison, as measured in this run; `met` is undefined when a row it needs did not run. */
export interface GoalCheck {
  goal: string;
  measured: string;
  met: boolean | undefined;
}

const fixed = (n: number) => n.toFixed(3);
const dialectOf = (row: GoalRow) => row.dialect ?? "chat";
const find = (rows: readonly GoalRow[], target: string, mode: string, concurrency: number, dialect = "chat") =>
  rows.find((r) => r.target === target && r.mode === mode && r.concurrency === concurrency && dialectOf(r) === dialect);

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
 * A non-chat row's CPU per request against the same target's chat row of the same mode and concurrency, as a
 * fraction (0.04 is 4% more); undefined for chat rows and when the chat row did not run.
 */
export function cpuVsChat(row: GoalRow, rows: readonly GoalRow[]): number | undefined {
  if (dialectOf(row) === "chat") return undefined;
  const chat = find(rows, row.target, row.mode, row.concurrency);
  if (!chat || chat.cpu_ms_per_request <= 0) return undefined;
  return row.cpu_ms_per_request / chat.cpu_ms_per_request - 1;
}

/** `+4.0%`, `-12.3%`: a fraction from `cpuVsChat` as printed (one decimal, so `+10.3%` does not read as within 10%). */
export const signedPercent = (fraction: number) => {
  const percent = Math.round(fraction * 1000) / 10;
  return `${percent >= 0 ? "+" : ""}${percent.toFixed(1)}%`;
};

/**
 * The comparison's performance goals, judged on the chat rows of one run: gateway CPU per buffered request at
 * c=10 against Portkey's (standalone at most half, the topology at most the same), standalone's added p50 at
 * c=1 under 1 ms, and each Switchyard form's added time to the first streamed byte at c=1 under 2 ms. Then,
 * for each of the Responses and Messages APIs, standalone's and the topology's CPU per request at c=10,
 * buffered and streamed, within 10% of chat's; and their embeddings CPU per request at c=10 (buffered, the
 * only mode) at most chat's.
 */
export function checkGoals(rows: readonly GoalRow[]): GoalCheck[] {
  const chat = (target: string, mode: "buffered" | "stream", concurrency: number) => find(rows, target, mode, concurrency);
  const portkey = chat("portkey", "buffered", 10);

  const cpuShare = (target: string, most: number): GoalCheck => {
    const goal = `${target} CPU per request at most ${most === 1 ? "Portkey's" : `${most} of Portkey's`} (buffered, c=10)`;
    const own = chat(target, "buffered", 10);
    if (!own || !portkey) return { goal, measured: "not measured", met: undefined };
    const share = own.cpu_ms_per_request / portkey.cpu_ms_per_request;
    return { goal, measured: `${fixed(own.cpu_ms_per_request)} vs ${fixed(portkey.cpu_ms_per_request)} ms = ${share.toFixed(2)}`, met: share <= most };
  };

  const under = (goal: string, value: number | undefined, limit: number): GoalCheck =>
    value === undefined ? { goal, measured: "not measured", met: undefined } : { goal, measured: `${fixed(value)} ms`, met: value < limit };

  const dialectCpu = (dialect: Exclude<Dialect, "chat">, limit: number, target: string, mode: "buffered" | "stream"): GoalCheck => {
    const goal = `${target} ${apiNames[dialect]} CPU per request ${limitText(limit)} (${mode}, c=10)`;
    const own = find(rows, target, mode, 10, dialect);
    const base = chat(target, mode, 10);
    if (!own || !base || base.cpu_ms_per_request <= 0) return { goal, measured: "not measured", met: undefined };
    const ratio = own.cpu_ms_per_request / base.cpu_ms_per_request;
    return { goal, measured: `${fixed(own.cpu_ms_per_request)} vs ${fixed(base.cpu_ms_per_request)} ms = ${signedPercent(ratio - 1)}`, met: ratio <= limit };
  };

  return [
    cpuShare("standalone", 0.5),
    cpuShare("topology", 1),
    under("standalone adds under 1 ms at p50 (buffered, c=1)", chat("standalone", "buffered", 1)?.added_p50_ms, 1),
    under("standalone adds under 2 ms to the first streamed byte (c=1)", chat("standalone", "stream", 1)?.added_ttfb_p50_ms, 2),
    under("topology adds under 2 ms to the first streamed byte (c=1)", chat("topology", "stream", 1)?.added_ttfb_p50_ms, 2),
    ...cpuComparedDialects.flatMap(({ dialect, limit, modes }) =>
      ["standalone", "topology"].flatMap((target) => modes.map((mode) => dialectCpu(dialect, limit, target, mode))),
    ),
  ];
}

/** `met`, `not met` or `not measured`, for the printed table. */
export const verdict = (check: GoalCheck) => (check.met === undefined ? "not measured" : check.met ? "met" : "not met");
