import type { ChartSeries } from "../components/chart.js";

/** One row of `GET /activity/daily` (libs/contracts/src/activity.ts). */
export interface DailyRow {
  date: string;
  group: string | null;
  requests: number;
  errors: number;
  prompt_tokens: number;
  completion_tokens: number;
  reasoning_tokens: number;
  usage: number;
  byok_usage: number;
  p50_generation_time_ms: number | null;
}

export interface Credits {
  total_credits: number;
  total_usage: number;
}

export interface OverviewData {
  byModel: DailyRow[];
  total: DailyRow[];
  credits: Credits;
}

const DAY_MS = 86_400_000;
/** The gateway answers at most 366 days, both ends included. */
export const MAX_DAYS = 366;
/** Models beyond these are summed into "Other" so the stacks stay readable. */
const TOP_MODELS = 7;

const dayNumber = (day: string) => Date.parse(`${day}T00:00:00Z`) / DAY_MS;

/** Every UTC day from `from` to `to`, both included. */
export function daysBetween(from: string, to: string): string[] {
  const days: string[] = [];
  for (let d = dayNumber(from); d <= dayNumber(to); d++) days.push(new Date(d * DAY_MS).toISOString().slice(0, 10));
  return days;
}

/** Why a custom range cannot be asked for, or null when it can. */
export function rangeProblem(from: string, to: string): string | null {
  if (!from || !to) return "Choose both a From and a To day.";
  if (Number.isNaN(dayNumber(from)) || Number.isNaN(dayNumber(to))) return "Both days must be real calendar days.";
  if (from > to) return "From must not be after To.";
  if (dayNumber(to) - dayNumber(from) + 1 > MAX_DAYS) return `The range can span at most ${MAX_DAYS} days.`;
  return null;
}

export interface Totals {
  spend: number;
  byok: number;
  requests: number;
  errors: number;
  promptTokens: number;
  completionTokens: number;
  reasoningTokens: number;
  p50: number | null;
  /** Days that had a p50: one means the figure is that day's median, more that it is a median of medians. */
  p50Days: number;
}

export function totalsOf(rows: DailyRow[]): Totals {
  const sum = (pick: (r: DailyRow) => number) => rows.reduce((t, r) => t + pick(r), 0);
  // The gateway keeps medians per day only; weighting each day's by its requests is the closest honest figure.
  const medians = rows.filter((r) => r.p50_generation_time_ms !== null && r.requests > 0).sort((a, b) => a.p50_generation_time_ms! - b.p50_generation_time_ms!);
  const weight = medians.reduce((t, r) => t + r.requests, 0);
  let p50: number | null = null;
  let seen = 0;
  for (const r of medians) {
    seen += r.requests;
    if (seen * 2 >= weight) {
      p50 = r.p50_generation_time_ms;
      break;
    }
  }
  return {
    spend: sum((r) => r.usage),
    byok: sum((r) => r.byok_usage),
    requests: sum((r) => r.requests),
    errors: sum((r) => r.errors),
    promptTokens: sum((r) => r.prompt_tokens),
    completionTokens: sum((r) => r.completion_tokens),
    reasoningTokens: sum((r) => r.reasoning_tokens),
    p50,
    p50Days: medians.length,
  };
}

export interface ChartData {
  spend: ChartSeries[];
  requests: ChartSeries[];
  tokens: ChartSeries[];
  errorRate: ChartSeries[];
  latency: ChartSeries[];
  topModel: string | null;
  /** Models with activity in the range; the spend and request charts sum those past the first few into "Other". */
  models: number;
}

export function chartsOf(days: string[], data: OverviewData): ChartData {
  const index = new Map(days.map((d, i) => [d, i]));
  const zeros = () => days.map(() => 0);

  const spendOf = new Map<string, number>();
  const requestsOf = new Map<string, number>();
  for (const r of data.byModel) {
    const model = r.group ?? "Unknown";
    spendOf.set(model, (spendOf.get(model) ?? 0) + r.usage);
    requestsOf.set(model, (requestsOf.get(model) ?? 0) + r.requests);
  }
  // Requests break ties so free models still rank by how much they are used.
  const ranked = [...spendOf.keys()].sort((a, b) => spendOf.get(b)! - spendOf.get(a)! || requestsOf.get(b)! - requestsOf.get(a)! || a.localeCompare(b));
  const top = ranked.length > TOP_MODELS + 1 ? ranked.slice(0, TOP_MODELS) : ranked;
  const slot = new Map(top.map((m, i) => [m, i]));
  const labels = top.length < ranked.length ? [...top, "Other"] : top;
  const spend = labels.map(zeros);
  const requests = labels.map(zeros);
  for (const r of data.byModel) {
    const d = index.get(r.date);
    if (d === undefined) continue;
    const s = slot.get(r.group ?? "Unknown") ?? top.length;
    spend[s]![d]! += r.usage;
    requests[s]![d]! += r.requests;
  }

  // Ungrouped, the gateway answers one row per day with data; the days between get zeros (no median).
  const byDay = new Map(data.total.map((r) => [r.date, r]));
  const perDay = (pick: (r: DailyRow) => number) => days.map((d) => {
    const r = byDay.get(d);
    return r ? pick(r) : 0;
  });
  const prompt = perDay((r) => r.prompt_tokens);
  const completion = perDay((r) => r.completion_tokens);
  const reasoning = perDay((r) => r.reasoning_tokens);
  const dayRequests = perDay((r) => r.requests);
  const dayErrors = perDay((r) => r.errors);
  const p50 = days.map((d) => byDay.get(d)?.p50_generation_time_ms ?? null);

  return {
    spend: labels.map((label, i) => ({ label, values: spend[i]! })),
    requests: labels.map((label, i) => ({ label, values: requests[i]! })),
    tokens: [
      { label: "Prompt", values: prompt },
      { label: "Completion", values: completion },
      { label: "Reasoning", values: reasoning },
    ],
    errorRate: [{ label: "Error rate", values: dayRequests.map((n, d) => (n > 0 ? dayErrors[d]! / n : 0)) }],
    latency: [{ label: "p50 latency", values: p50 }],
    topModel: ranked[0] ?? null,
    models: ranked.length,
  };
}
