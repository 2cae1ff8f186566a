import { toPico } from "@switchyard/runtime";

/** What one transcription, image generation or speech used, as the provider reported it or as estimated. */
export interface MediaUsage {
  seconds?: number;
  images?: number;
  references?: number;
  /** Characters of the text a speech endpoint spoke, at the `character` price. */
  characters?: number;
  /** Audio input tokens of token-priced transcription, at the `audio` price (else `prompt`). */
  audioTokens?: number;
  /** Audio output tokens of token-priced speech, at the `audio_output` price. */
  audioOutputTokens?: number;
  promptTokens: number;
  completionTokens: number;
}

/** Seconds are priced to the millisecond, rounded up, so a fraction of a second is never free. */
const perSecond = (price: string | undefined, seconds: number) => (BigInt(Math.ceil(seconds * 1000)) * toPico(price)) / 1000n;

/**
 * The one pricing function of media, in picodollars, from the catalog's prices: `audio_second` per second of
 * audio, `image_output` per generated image, `image` per reference image, `character` per character spoken,
 * `audio` per audio input token, `audio_output` per audio output token, `prompt` and `completion` per token,
 * `request` per request.
 */
export function mediaCost(pricing: Record<string, string>, usage: MediaUsage): bigint {
  return (
    perSecond(pricing.audio_second, usage.seconds ?? 0) +
    BigInt(usage.images ?? 0) * toPico(pricing.image_output) +
    BigInt(usage.references ?? 0) * toPico(pricing.image) +
    BigInt(usage.characters ?? 0) * toPico(pricing.character) +
    BigInt(usage.audioTokens ?? 0) * toPico(pricing.audio ?? pricing.prompt) +
    BigInt(usage.audioOutputTokens ?? 0) * toPico(pricing.audio_output) +
    BigInt(usage.promptTokens) * toPico(pricing.prompt) +
    BigInt(usage.completionTokens) * toPico(pricing.completion) +
    toPico(pricing.request)
  );
}

/** Token rates no transcription or speech model exceeds, to bound a request before the provider says what it used. */
export const audioTokensPerSecond = 50;
export const transcriptTokensPerSecond = 20;
/** An output image's tokens when the endpoint states no limit (a 4K image is about 2,000 to 6,500). */
export const imageTokensBound = 8192;
/** A reference image's prompt tokens, as chat counts an image. */
export const referenceTokens = 2000;
