import { createHash } from "node:crypto";
import { maxPriceKeys, type MaxPrice, type ProviderPreferences, type ResolvedEndpoint, type ResolvedModel } from "@switchyard/contracts";
import { badRequest, toPico } from "@switchyard/runtime";
import type { EndpointFigures } from "./endpoint-stats/stats.js";
import { billedPriceKeys, defaultOrder, preferredFirst, restingLast, sortedBy, sortOf, unitPriceOf, type FiguresOf } from "./stats-order.js";

export interface Candidate {
  model: string;
  endpoint: ResolvedEndpoint;
  /** How the endpoint has been doing when the order was made; absent before its first measured attempt. */
  figures?: EndpointFigures;
  /** The workspace's own key for the endpoint's provider (BYOK): this attempt uses it, not the operator's. */
  byokKey?: string;
  /**
   * Picodollars for one unit of each price its model's kind bills (`unitPriceOf`), at the prices the request
   * is charged (its service tier's): what price ordering compares.
   */
  unitPrice?: number;
}

/**
 * The price a `provider.max_price` key bounds on an endpoint: its own, else the price its tokens are billed
 * at without one (cached and audio tokens at `prompt`, hour-long cache writes at `input_cache_write`,
 * reasoning tokens at `completion`). A unit the endpoint does not price (per second, per character…) it
 * does not bill, so its price is zero.
 */
const standIns: Partial<Record<keyof MaxPrice, keyof MaxPrice>> = {
  input_cache_read: "prompt",
  input_cache_write: "prompt",
  input_cache_write_1h: "input_cache_write",
  audio: "prompt",
  internal_reasoning: "completion",
};
function priceOf(pricing: Readonly<Record<string, string>>, key: keyof MaxPrice): bigint {
  for (let k: keyof MaxPrice | undefined = key; k !== undefined; k = standIns[k]) if (pricing[k] !== undefined) return toPico(pricing[k]);
  return 0n;
}

/** `max_price` keys given per million text tokens, as OpenRouter gives `prompt` and `completion`; the others are per unit. */
const perMillionTokens = new Set<keyof MaxPrice>(["prompt", "completion", "input_cache_read", "input_cache_write", "input_cache_write_1h", "internal_reasoning"]);

/** Whether an endpoint's price for `key` is above `max`, in the key's own unit. */
const above = (pricing: Readonly<Record<string, string>>, key: keyof MaxPrice, max: string): boolean =>
  priceOf(pricing, key) * (perMillionTokens.has(key) ? 1_000_000n : 1n) > toPico(max);

/**
 * A workspace that brought its own key for a provider has that provider's endpoints tried with it first;
 * the same endpoint with the operator's key follows when the workspace allows it (`operator_fallback`) and
 * the operator has a key. `open` reads the workspace's key (once per provider per request).
 */
export async function withWorkspaceKeys(candidates: Candidate[], open: (provider: string) => Promise<string | undefined>): Promise<Candidate[]> {
  if (!candidates.some((c) => c.endpoint.byok)) return candidates;
  const opened = new Map<string, Promise<string | undefined>>();
  const out: Candidate[] = [];
  for (const c of candidates) {
    const byok = c.endpoint.byok;
    if (!byok) {
      out.push(c);
      continue;
    }
    if (!opened.has(c.endpoint.provider)) opened.set(c.endpoint.provider, open(c.endpoint.provider));
    const key = await opened.get(c.endpoint.provider);
    if (key) out.push({ ...c, byokKey: key });
    // A key removed since the policy was read leaves the operator's, whatever the fallback setting said.
    if (c.endpoint.operator_key && (!key || byok.operator_fallback)) out.push(c);
  }
  return out;
}

/** A small deterministic generator, so one session id always yields the same order (sticky routing). */
function seeded(seed: string): () => number {
  let state = createHash("sha256").update(seed).digest().readUInt32LE(0) || 1;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 2 ** 32;
  };
}

/** Parameters that are one setting under two names: an endpoint that lists either supports both. */
const aliases: ReadonlyArray<readonly [string, string]> = [
  ["max_completion_tokens", "max_tokens"],
  ["reasoning_effort", "reasoning"],
];

/** Whether an endpoint's `supported_parameters` cover `parameter`, under its own name or its alias. */
const supports = (supported: readonly string[], parameter: string): boolean =>
  supported.includes(parameter) || aliases.some((pair) => pair.includes(parameter) && pair.some((name) => supported.includes(name)));

export interface OrderOptions {
  preferences: ProviderPreferences | undefined;
  sessionId: string | undefined;
  /** The provider that served the session's last request for this model (sticky routing): first in the default order. */
  servedSession?: string | undefined;
  /** Request parameters the endpoint must support when `provider.require_parameters` is set. */
  requestedParameters: string[];
  /** Endpoints resting after a failure or a Retry-After, or being probed by another request; tried last. */
  coolingDown: (endpoint: ResolvedEndpoint) => boolean;
  /** Live figures of an endpoint (every replica's); none when statistics are not kept. */
  figuresOf?: FiguresOf | undefined;
  /**
   * The prices the request will be charged at on an endpoint (its service tier's, where it asks for one
   * priced apart): what `provider.max_price`, the price sort and the default order compare. The standard
   * `pricing` without it.
   */
  pricingOf?: ((endpoint: ResolvedEndpoint) => Readonly<Record<string, string>>) | undefined;
}

const providerLists = ["order", "only", "ignore"] as const;
const folded = (name: string) => name.trim().toLowerCase();

/**
 * `provider.order`, `only` and `ignore` as slugs: an entry matches a provider's slug or display name (as
 * `GET /providers` lists them, and as OpenRouter's SDK sends names) whatever its case and surrounding
 * spaces. An entry that names no provider of the catalog is a 400 naming it, so a misspelt `ignore` never
 * lets the provider it meant serve the request. Without the catalog's list, entries match slugs only.
 */
export function providerSlugs(prefs: ProviderPreferences | undefined, providers: ResolvedModel["providers"]): ProviderPreferences | undefined {
  if (!prefs || providerLists.every((list) => !prefs[list]?.length)) return prefs;
  const bySlug = new Map<string, string>();
  const byName = new Map<string, string>();
  for (const p of providers ?? []) {
    bySlug.set(folded(p.slug), p.slug);
    byName.set(folded(p.name), p.slug);
  }
  const slugOf = (entry: string, list: string, i: number): string => {
    if (!providers) return folded(entry);
    const slug = bySlug.get(folded(entry)) ?? byName.get(folded(entry));
    if (slug === undefined) throw badRequest(`Invalid body: provider.${list}[${i}]: ${JSON.stringify(entry)} names no provider of this gateway (GET /providers lists their slugs and names)`);
    return slug;
  };
  const out: ProviderPreferences = { ...prefs };
  for (const list of providerLists) {
    const entries = prefs[list];
    if (entries) out[list] = entries.map((entry, i) => slugOf(entry, list, i));
  }
  return out;
}

/** The endpoints of one resolved model in the order to try them, and why the others were dropped. */
export function orderCandidates(resolved: ResolvedModel, options: OrderOptions): { candidates: Candidate[]; dropped: string[] } {
  const prefs = providerSlugs(options.preferences, resolved.providers);
  const pricingOf = options.pricingOf ?? ((e: ResolvedEndpoint) => e.pricing);
  const dropped: string[] = [];
  // A model whose author does not allow distilling its output has no endpoint for such a request.
  const undistillable = prefs?.enforce_distillable_text === true && !resolved.distillable;
  const endpoints = resolved.endpoints.filter((e) => {
    if (undistillable) return void dropped.push(`${e.provider}: ${resolved.model} does not allow text distillation (provider.enforce_distillable_text)`);
    if (prefs?.only && !prefs.only.includes(e.provider)) return void dropped.push(`${e.provider}: not in provider.only`);
    if (prefs?.ignore?.includes(e.provider)) return void dropped.push(`${e.provider}: in provider.ignore`);
    // An endpoint that declares none is `unknown`, as OpenRouter lists it: it passes only when that is asked for.
    const quantization = e.quantization ?? "unknown";
    if (prefs?.quantizations?.length && !prefs.quantizations.includes(quantization)) {
      return void dropped.push(`${e.provider}: quantization ${quantization} not in provider.quantizations`);
    }
    for (const key of maxPriceKeys) {
      const max = prefs?.max_price?.[key];
      if (max !== undefined && above(pricingOf(e), key, max)) return void dropped.push(`${e.provider}: ${key} price above provider.max_price`);
    }
    if (prefs?.data_collection === "deny" && (e.data_policy.training || e.data_policy.retains_prompts)) {
      return void dropped.push(`${e.provider}: ${e.data_policy.training ? "trains on" : "retains"} prompts (provider.data_collection: deny)`);
    }
    if (prefs?.zdr && !e.zdr) return void dropped.push(`${e.provider}: no zero data retention (provider.zdr)`);
    if (prefs?.require_parameters) {
      const missing = options.requestedParameters.filter((p) => !supports(e.supported_parameters, p));
      if (missing.length) return void dropped.push(`${e.provider}: does not support ${missing.join(", ")} (provider.require_parameters)`);
    }
    return true;
  });
  const figuresOf = options.figuresOf;
  const billed = billedPriceKeys(resolved.output_modalities);
  let ordered = endpoints.map((endpoint): Candidate => {
    const figures = figuresOf?.(endpoint.provider, resolved.model);
    const unitPrice = unitPriceOf(pricingOf(endpoint), billed);
    return figures ? { model: resolved.model, endpoint, figures, unitPrice } : { model: resolved.model, endpoint, unitPrice };
  });
  const sort = sortOf(prefs) ?? resolved.sort;
  ordered = sort === "price" || sort === "latency" || sort === "throughput"
    ? sortedBy(ordered, sort)
    : defaultOrder(ordered, options.sessionId ? seeded(`${options.sessionId}|${resolved.model}`) : Math.random, options.servedSession);
  if (prefs?.order?.length) {
    const rank = (c: Candidate) => {
      const i = prefs.order!.indexOf(c.endpoint.provider);
      return i === -1 ? prefs.order!.length : i;
    };
    ordered = [...ordered].sort((a, b) => rank(a) - rank(b));
    if (prefs.allow_fallbacks === false) {
      for (const c of ordered) if (!prefs.order.includes(c.endpoint.provider)) dropped.push(`${c.endpoint.provider}: not in provider.order (provider.allow_fallbacks is false)`);
      ordered = ordered.filter((c) => prefs.order!.includes(c.endpoint.provider));
    }
  } else ordered = preferredFirst(ordered, prefs);
  ordered = restingLast(ordered, options.coolingDown);
  // No fallbacks and no order of the caller's: the first endpoint of the default order is the only one.
  if (prefs?.allow_fallbacks === false && !prefs.order?.length && ordered.length > 1) {
    for (const c of ordered.slice(1)) dropped.push(`${c.endpoint.provider}: provider.allow_fallbacks is false`);
    ordered = ordered.slice(0, 1);
  }
  return { candidates: ordered, dropped };
}
