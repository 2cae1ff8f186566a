import type { ResolvedEndpoint } from "@switchyard/contracts";

/** Tiers priced apart from the standard one; `auto` and `default` are standard. */
const pricedTiers = new Set(["flex", "priority", "scale"]);

/** The tier priced apart that a `service_tier` names (`fast` is OpenRouter's name for `priority`), if it names one. */
export function pricedTier(serviceTier: unknown): string | undefined {
  const tier = serviceTier === "fast" ? "priority" : serviceTier;
  return typeof tier === "string" && pricedTiers.has(tier) ? tier : undefined;
}

/** The endpoint's prices at a tier: its `service_tiers` entry over its standard prices. */
export function tierPricing(endpoint: ResolvedEndpoint, tier: string | undefined): Readonly<Record<string, string>> {
  const own = tier === undefined ? undefined : endpoint.service_tiers?.[tier];
  return own ? { ...endpoint.pricing, ...own } : endpoint.pricing;
}

/** Tiers a provider may serve at unasked: with `auto` or no tier it may use priority or scale capacity; flex only when asked. */
const unaskedTiers = ["priority", "scale"];

/**
 * The prices an attempt may be charged at, which its hold covers: the tier's asked for (`default` is
 * standard); with `auto` or no tier, standard and each tier the provider may choose itself and the catalog
 * prices, since the charge follows the tier the provider says it served.
 */
export function possiblePricings(endpoint: ResolvedEndpoint, serviceTier: unknown): Array<Readonly<Record<string, string>>> {
  const tier = pricedTier(serviceTier);
  if (tier !== undefined || serviceTier === "default") return [tierPricing(endpoint, tier)];
  return [endpoint.pricing, ...unaskedTiers.flatMap((t) => (endpoint.service_tiers?.[t] ? [tierPricing(endpoint, t)] : []))];
}

/** Why an endpoint cannot serve a request for a tier, if it cannot: the catalog gives it no price for it. */
export const unpricedTier = (endpoint: ResolvedEndpoint, serviceTier: unknown): string | undefined => {
  const tier = pricedTier(serviceTier);
  return tier !== undefined && !endpoint.service_tiers?.[tier] ? `no ${tier} price for service_tier` : undefined;
};

/**
 * The tier a generation is charged at: the one its provider says it served (`default` is standard), else
 * the one asked for.
 */
export const chargedTier = (served: string | null | undefined, asked: unknown): string | undefined => (typeof served === "string" && served ? pricedTier(served) : pricedTier(asked));
