/**
 * Money in exact integers: prices are decimal strings of USD per unit, converted to picodollars
 * (1e-12 USD) so that summing token costs never drifts the way binary floating point does.
 */
const scale = 12;
const unit = 10n ** BigInt(scale);

export function toPico(decimal: string | undefined): bigint {
  if (!decimal) return 0n;
  const match = /^(\d+)(?:\.(\d+))?$/.exec(decimal);
  if (!match) throw new Error(`not a decimal price: ${decimal}`);
  const fraction = (match[2] ?? "").padEnd(scale, "0");
  if (fraction.length > scale && /[1-9]/.test(fraction.slice(scale))) throw new Error(`price ${decimal} is finer than 1e-12 USD`);
  return BigInt(match[1]!) * unit + BigInt(fraction.slice(0, scale));
}

export const picoToUsd = (pico: bigint): number => Number(pico) / Number(unit);

/** USD decimal string of picodollars, exact: what events and the ledger carry. */
export function picoToDecimal(pico: bigint): string {
  const whole = pico / unit;
  const fraction = (pico % unit).toString().padStart(scale, "0").replace(/0+$/, "");
  return fraction ? `${whole}.${fraction}` : `${whole}`;
}

export interface Pricing {
  prompt: string;
  completion: string;
  request?: string;
  input_cache_read?: string;
  input_cache_write?: string;
  internal_reasoning?: string;
}

export interface TokenCounts {
  prompt: number;
  completion: number;
  cachedPrompt?: number;
  /** Prompt tokens written to the provider's cache (Anthropic charges a premium for them). */
  cacheWritePrompt?: number;
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
 * at the cache-read price and cache writes at the cache-write price when the endpoint has them; reasoning
 * tokens at the reasoning price when it has one.
 */
export function costOf(pricing: Pricing, tokens: TokenCounts): Cost {
  const cached = Math.min(tokens.cachedPrompt ?? 0, tokens.prompt);
  const written = Math.min(tokens.cacheWritePrompt ?? 0, tokens.prompt - cached);
  const promptPrice = toPico(pricing.prompt);
  const cacheRead = pricing.input_cache_read !== undefined ? toPico(pricing.input_cache_read) : promptPrice;
  const cacheWrite = pricing.input_cache_write !== undefined ? toPico(pricing.input_cache_write) : promptPrice;
  const prompt = BigInt(tokens.prompt - cached - written) * promptPrice + BigInt(cached) * cacheRead + BigInt(written) * cacheWrite;
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
