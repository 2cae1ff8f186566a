import type { ProviderPreferences, ResolvedEndpoint } from "@switchyard/contracts";
import { toPico } from "@switchyard/runtime";
import type { Candidate } from "./candidates.js";
import type { Percentiles } from "./endpoint-stats/histogram.js";
import type { EndpointFigures } from "./endpoint-stats/stats.js";

export type FiguresOf = (provider: string, model: string) => EndpointFigures | undefined;
export type SortBy = "price" | "latency" | "throughput";

/**
 * The prices a request of each output modality is billed in, as its cost function reads them: chat's
 * `costOf` (prompt, completion, request), `retrievalCost` for embeddings and rerank, `mediaCost` for
 * transcription, speech and images. Cache and reasoning prices stand in for prompt or completion on some
 * tokens; they are not units of their own here.
 */
const chatPrices = ["prompt", "completion", "request"] as const;
const billedPrices: Readonly<Record<string, readonly string[]>> = {
  text: chatPrices,
  embeddings: ["prompt", "request"],
  rerank: ["prompt", "search_unit", "request"],
  transcription: ["audio_second", "audio", "prompt", "completion", "request"],
  speech: ["character", "audio_output", "prompt", "completion", "request"],
  image: ["image_output", "image", "prompt", "completion", "request"],
};

/** The prices a model of these output modalities bills; a model of several modalities bills in each one's. */
export function billedPriceKeys(outputModalities: readonly string[]): string[] {
  const keys = new Set(outputModalities.flatMap((m) => billedPrices[m] ?? []));
  return keys.size ? [...keys] : [...chatPrices];
}

/**
 * Picodollars for one unit of each price the endpoint bills: what the price sort and the default order
 * compare. When every endpoint of a model bills in one unit (the usual case) this orders them by that
 * price; in the same several units, one that is cheaper in each never goes behind. The sum does not convert
 * one unit into another: where endpoints bill in different units (one per character, another per audio
 * token, or one adds a per-request price) it counts one of each, a rough comparison.
 */
export const unitPriceOf = (pricing: Readonly<Record<string, string>>, keys: readonly string[]): number =>
  Number(keys.reduce((sum, key) => sum + toPico(pricing[key] ?? "0"), 0n));

/** A candidate's unit price, as its model's modalities bill it; a chat model's when the candidate carries none. */
const unitPrice = (c: Candidate) => c.unitPrice ?? unitPriceOf(c.endpoint.pricing, chatPrices);

/** `provider.sort` as a string or as `{ by }`; undefined when the request names none. */
export const sortOf = (prefs: ProviderPreferences | undefined): string | undefined =>
  (typeof prefs?.sort === "string" ? prefs.sort : prefs?.sort?.by) ?? undefined;

const partitionOf = (prefs: ProviderPreferences | undefined) => (typeof prefs?.sort === "object" ? prefs.sort?.partition : undefined) ?? "model";

/** An endpoint whose recent attempts failed this often, over at least this number of them, has had an outage. */
const outageUptime = 80;
const outageAttempts = 3;

/**
 * By the chosen figure, best first: cheapest; lowest median time to first output; highest median output
 * tokens per second. Endpoints without that figure yet follow the measured ones, cheapest first.
 */
export function sortedBy(candidates: readonly Candidate[], by: SortBy): Candidate[] {
  const score = (c: Candidate): number | undefined => {
    if (by === "price") return unitPrice(c);
    if (by === "latency") return c.figures?.latency?.p50;
    const throughput = c.figures?.throughput?.p50;
    return throughput === undefined ? undefined : -throughput;
  };
  return [...candidates].sort((a, b) => {
    const x = score(a);
    const y = score(b);
    if (x === undefined || y === undefined) return x === y ? unitPrice(a) - unitPrice(b) : x === undefined ? 1 : -1;
    return x - y || unitPrice(a) - unitPrice(b);
  });
}

/** Whether the endpoint had a significant outage lately (its attempts of about the last bucket). */
const hadOutage = (f: EndpointFigures | undefined) => f !== undefined && f.recentAttempts >= outageAttempts && (f.recentUptime ?? 100) < outageUptime;

/**
 * The default order, as OpenRouter describes its own: endpoints without a recent outage first, then the
 * others. Within each group an endpoint's chance to go first is proportional to the inverse square of its
 * unit price times its uptime over 5 minutes, so cheap, reliable endpoints take most traffic while the others
 * stay warm as fallbacks. The provider that served the request's session last (`sticky`) goes first of
 * its group, so a conversation stays where it is while that endpoint keeps answering.
 */
export function defaultOrder(candidates: readonly Candidate[], random: () => number, sticky?: string): Candidate[] {
  const weighted = (group: Candidate[]) => {
    const pool = group.map((c) => ({ c, w: ((c.figures?.uptime5m ?? 100) / 100 || 0.01) / (1 + unitPrice(c) / 1e6) ** 2 }));
    const order: Candidate[] = [];
    const kept = sticky === undefined ? -1 : pool.findIndex((p) => p.c.endpoint.provider === sticky);
    if (kept !== -1) order.push(pool.splice(kept, 1)[0]!.c);
    while (pool.length) {
      let pick = random() * pool.reduce((sum, p) => sum + p.w, 0);
      const index = pool.findIndex((p) => (pick -= p.w) <= 0);
      order.push(pool.splice(index === -1 ? pool.length - 1 : index, 1)[0]!.c);
    }
    return order;
  };
  return [...weighted(candidates.filter((c) => !hadOutage(c.figures))), ...weighted(candidates.filter((c) => hadOutage(c.figures)))];
}

const quantiles = ["p50", "p75", "p90", "p99"] as const;
type Cutoffs = number | Partial<Record<(typeof quantiles)[number], number | null>> | null | undefined;

/** Whether measured percentiles pass every cutoff given (a bare number is the p50's); unmeasured ones pass. */
function passes(measured: Percentiles | null | undefined, cutoffs: Cutoffs, fails: (value: number, cutoff: number) => boolean): boolean {
  if (cutoffs === null || cutoffs === undefined || !measured) return true;
  const cuts = typeof cutoffs === "number" ? { p50: cutoffs } : cutoffs;
  return quantiles.every((q) => cuts[q] === null || cuts[q] === undefined || !fails(measured[q], cuts[q]));
}

/** Whether an endpoint meets `preferred_max_latency` (seconds) and `preferred_min_throughput` (tokens per second). */
const meetsPreferences = (f: EndpointFigures | undefined, prefs: ProviderPreferences | undefined): boolean =>
  passes(f?.latency, prefs?.preferred_max_latency, (ms, seconds) => ms > seconds * 1000) &&
  passes(f?.throughput, prefs?.preferred_min_throughput, (perSecond, least) => perSecond < least);

/** Endpoints that meet the request's preferred latency and throughput first; the others stay, behind them. */
export function preferredFirst(candidates: Candidate[], prefs: ProviderPreferences | undefined): Candidate[] {
  if (prefs?.preferred_max_latency == null && prefs?.preferred_min_throughput == null) return candidates;
  const preferred = candidates.filter((c) => meetsPreferences(c.figures, prefs));
  return preferred.length === candidates.length ? candidates : [...preferred, ...candidates.filter((c) => !preferred.includes(c))];
}

/** Endpoints resting after a failure (or being probed by another request) go behind the others. */
export function restingLast(candidates: Candidate[], coolingDown: (endpoint: ResolvedEndpoint) => boolean): Candidate[] {
  const resting = candidates.filter((c) => coolingDown(c.endpoint));
  return resting.length ? [...candidates.filter((c) => !resting.includes(c)), ...resting] : candidates;
}

/**
 * The candidates of every model of a request together: with `sort.partition: "none"` sorted as one list
 * (a fallback model's endpoint can go before the first model's); endpoints that meet the preferred latency
 * and throughput before those that do not, whichever model they serve; resting endpoints last.
 */
export function acrossModels(candidates: Candidate[], prefs: ProviderPreferences | undefined, coolingDown: (endpoint: ResolvedEndpoint) => boolean): Candidate[] {
  const by = sortOf(prefs);
  let ordered = candidates;
  if (partitionOf(prefs) === "none" && (by === "price" || by === "latency" || by === "throughput")) ordered = sortedBy(ordered, by);
  if (!prefs?.order?.length) ordered = preferredFirst(ordered, prefs);
  return restingLast(ordered, coolingDown);
}

/** What chose the endpoints' order, for `openrouter_metadata`'s summary. */
export function orderBasis(prefs: ProviderPreferences | undefined, resolvedSort: string | null): string {
  if (prefs?.order?.length) return "provider.order";
  const by = sortOf(prefs) ?? resolvedSort;
  const preferred = prefs?.preferred_max_latency != null || prefs?.preferred_min_throughput != null ? ", preferred latency/throughput first" : "";
  if (by === "latency") return `sort by latency (median time to first output, last 30 min)${preferred}`;
  if (by === "throughput") return `sort by throughput (median output tokens per second, last 30 min)${preferred}`;
  if (by === "price") return `sort by price${preferred}`;
  return `price and uptime (last 5 min), endpoints with a recent outage last${preferred}`;
}
