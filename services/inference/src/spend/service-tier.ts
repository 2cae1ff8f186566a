import type { ResolvedEndpoint } from "@switchyard/contracts";
import { chargedPricing, isLongPrompt } from "./pricing.js";

/** Tiers priced apart from the standard one; `auto` and `default` are standard. */
const pricedTiers = new Set(["flex", "priority", "scale"]);

/** The tier priced apart that a `service_tier` names (`fast` is OpenRouter's name for `priority`), if it names one. */
export function pricedTier(serviceTier: unknown): string | undefined {
  const tier = serviceTier === "fast" ? "priority" : serviceTier;
  return typeof tier === "string" && pricedTiers.has(tier) ? tier : undefined;
}

/** Tiers a provider may serve at unasked: with `auto` or no tier it may use priority or scale capacity; flex only when asked. */
const unaskedTiers = ["priority", "scale"];

/**
 * The prices an attempt may be charged at, which its hold covers: the tier's asked for (`default` is
 * standard); with `auto` or no tier, standard and each tier the provider may choose itself and the catalog
 * prices, since the charge follows the tier the provider says it served. `promptBound` is an upper bound on
 * the prompt's tokens: above the long-context threshold the prompt may be counted on either side of it, so
 * each tier's prices count with and without the long-context ones.
 */
export function possiblePricings(endpoint: ResolvedEndpoint, serviceTier: unknown, promptBound: number): Array<Readonly<Record<string, string>>> {
  const tier = pricedTier(serviceTier);
  const tiers = tier !== undefined || serviceTier === "default" ? [tier] : [undefined, ...unaskedTiers.filter((t) => endpoint.service_tiers?.[t])];
  const threshold = endpoint.long_context?.above_prompt_tokens;
  const prompts = threshold !== undefined && isLongPrompt(endpoint, promptBound) ? [threshold, promptBound] : [promptBound];
  return tiers.flatMap((t) => prompts.map((tokens) => chargedPricing(endpoint, t, tokens)));
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
