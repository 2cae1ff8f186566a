import { toPico } from "@switchyard/runtime";

export interface Pricing {
  prompt: string;
  completion: string;
  request?: string;
  input_cache_read?: string;
  input_cache_write?: string;
  /** Cache writes kept an hour; without it they cost input_cache_write. */
  input_cache_write_1h?: string;
  internal_reasoning?: string;
}

export interface TokenCounts {
  prompt: number;
  completion: number;
  cachedPrompt?: number;
  /** Prompt tokens written to the provider's cache (Anthropic charges a premium for them). */
  cacheWritePrompt?: number;
  /** Of those, the ones kept an hour (a higher premium). */
  cacheWrite1hPrompt?: number;
  reasoning?: number;
}

export interface Cost {
  prompt: bigint;
  completion: bigint;
  request: bigint;
  total: bigint;
}

/**
 * The one pricing function, for streamed and buffered responses alike. Cached prompt tokens are charged
 * at the cache-read price and cache writes at the cache-write price (hour-long ones at theirs) when the
 * endpoint has them; reasoning tokens at the reasoning price when it has one.
 */
export function costOf(pricing: Pricing, tokens: TokenCounts): Cost {
  const cached = Math.min(tokens.cachedPrompt ?? 0, tokens.prompt);
  const written = Math.min(tokens.cacheWritePrompt ?? 0, tokens.prompt - cached);
  const promptPrice = toPico(pricing.prompt);
  const cacheRead = pricing.input_cache_read !== undefined ? toPico(pricing.input_cache_read) : promptPrice;
  const cacheWrite = pricing.input_cache_write !== undefined ? toPico(pricing.input_cache_write) : promptPrice;
  const cacheWrite1h = pricing.input_cache_write_1h !== undefined ? toPico(pricing.input_cache_write_1h) : cacheWrite;
  const hour = Math.min(tokens.cacheWrite1hPrompt ?? 0, written);
  const prompt = BigInt(tokens.prompt - cached - written) * promptPrice + BigInt(cached) * cacheRead + BigInt(written - hour) * cacheWrite + BigInt(hour) * cacheWrite1h;
  const reasoning = Math.min(tokens.reasoning ?? 0, tokens.completion);
  const reasoningPrice = pricing.internal_reasoning !== undefined ? toPico(pricing.internal_reasoning) : toPico(pricing.completion);
  const completion = BigInt(tokens.completion - reasoning) * toPico(pricing.completion) + BigInt(reasoning) * reasoningPrice;
  const request = toPico(pricing.request);
  return { prompt, completion, request, total: prompt + completion + request };
}

/**
 * A rough token count for text when a provider reports no usage: about four characters per token,
 * rounded up, so real work is never recorded as free.
 */
export const estimateTokens = (text: string): number => (text.length === 0 ? 0 : Math.ceil(text.length / 4));
