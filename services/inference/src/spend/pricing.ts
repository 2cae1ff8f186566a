import type { ResolvedEndpoint } from "@switchyard/contracts";

/** Whether a prompt of `promptTokens` is above the endpoint's long-context threshold, which prices it apart. */
export const isLongPrompt = (endpoint: ResolvedEndpoint, promptTokens: number): boolean =>
  endpoint.long_context !== undefined && promptTokens > endpoint.long_context.above_prompt_tokens;

/**
 * The prices a generation is charged on an endpoint: its standard prices, its long-context prices over them
 * when the prompt is above their threshold (for every token of the generation), and the service tier's own
 * prices over those for the keys the tier sets.
 */
export function chargedPricing(endpoint: ResolvedEndpoint, tier: string | undefined, promptTokens: number): Readonly<Record<string, string>> {
  const long = isLongPrompt(endpoint, promptTokens) ? endpoint.long_context?.pricing : undefined;
  const own = tier === undefined ? undefined : endpoint.service_tiers?.[tier];
  return long || own ? { ...endpoint.pricing, ...long, ...own } : endpoint.pricing;
}
