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
  /** Per audio token of the prompt; without it they cost prompt. */
  audio?: string;
  /** Per audio token of the completion; without it they cost completion. */
  audio_output?: string;
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
  /** Prompt tokens of audio. */
  audioPrompt?: number;
  /** Completion tokens of audio (a spoken answer). */
  audioCompletion?: number;
}

export interface Cost {
  prompt: bigint;
  completion: bigint;
  request: bigint;
  total: bigint;
}

/**
 * A count as the pricing takes it: a whole number, at least zero. Adapters refuse other figures; this keeps
 * a count that slipped past one (or a caller's arithmetic) from pricing work below zero, a refund nobody
 * earned, or from throwing where a fraction cannot be a BigInt.
 */
const whole = (n: number | undefined): number => (n !== undefined && Number.isFinite(n) && n > 0 ? Math.ceil(n) : 0);

/**
 * The one pricing function, for streamed and buffered responses alike. Cached prompt tokens are charged
 * at the cache-read price and cache writes at the cache-write price (hour-long ones at theirs) when the
 * endpoint has them, the prompt's other audio tokens at the audio price; reasoning tokens at the reasoning
 * price and the completion's other audio tokens at the audio output price. Each of those is a share of its
 * whole (at most the prompt's or the completion's tokens left by the shares before it), so no cost is below
 * zero; a price the endpoint does not list is the prompt's or the completion's.
 */
export function costOf(pricing: Pricing, tokens: TokenCounts): Cost {
  const promptTokens = whole(tokens.prompt);
  const completionTokens = whole(tokens.completion);
  const cached = Math.min(whole(tokens.cachedPrompt), promptTokens);
  const written = Math.min(whole(tokens.cacheWritePrompt), promptTokens - cached);
  const audio = Math.min(whole(tokens.audioPrompt), promptTokens - cached - written);
  const promptPrice = toPico(pricing.prompt);
  const cacheRead = pricing.input_cache_read !== undefined ? toPico(pricing.input_cache_read) : promptPrice;
  const cacheWrite = pricing.input_cache_write !== undefined ? toPico(pricing.input_cache_write) : promptPrice;
  const cacheWrite1h = pricing.input_cache_write_1h !== undefined ? toPico(pricing.input_cache_write_1h) : cacheWrite;
  const audioPrice = pricing.audio !== undefined ? toPico(pricing.audio) : promptPrice;
  const hour = Math.min(whole(tokens.cacheWrite1hPrompt), written);
  const prompt =
    BigInt(promptTokens - cached - written - audio) * promptPrice + BigInt(cached) * cacheRead + BigInt(written - hour) * cacheWrite + BigInt(hour) * cacheWrite1h + BigInt(audio) * audioPrice;
  const reasoning = Math.min(whole(tokens.reasoning), completionTokens);
  const spoken = Math.min(whole(tokens.audioCompletion), completionTokens - reasoning);
  const completionPrice = toPico(pricing.completion);
  const reasoningPrice = pricing.internal_reasoning !== undefined ? toPico(pricing.internal_reasoning) : completionPrice;
  const audioOutputPrice = pricing.audio_output !== undefined ? toPico(pricing.audio_output) : completionPrice;
  const completion = BigInt(completionTokens - reasoning - spoken) * completionPrice + BigInt(reasoning) * reasoningPrice + BigInt(spoken) * audioOutputPrice;
  const request = toPico(pricing.request);
  return { prompt, completion, request, total: prompt + completion + request };
}

/**
 * A rough token count for text when a provider reports no usage: about four characters per token,
 * rounded up, so real work is never recorded as free.
 */
export const estimateTokens = (text: string): number => (text.length === 0 ? 0 : Math.ceil(text.length / 4));
