import { speechCharacters, type SpeechFormat } from "@switchyard/contracts";
import { toPico } from "@switchyard/runtime";
import type { Candidate } from "@switchyard/upstream";
import { audioTokensPerSecond, mediaCost, type MediaUsage } from "../cost.js";
import type { SpeechUsage } from "../providers/types.js";

/** The text a speech request sends, after the guardrails' content filters. */
export interface SpeechText {
  input: string;
  instructions: string | undefined;
  /** Characters of `input`: what a per-character price charges, exactly. */
  characters: number;
}

export const speechText = (input: string, instructions: string | undefined): SpeechText => ({ input, instructions, characters: speechCharacters(input) });

/**
 * The slowest text to speak is digits and symbols read out as words ("7" is "seven"): about 0.4 s a
 * character at speed 1.
 */
const slowestCharactersPerSecond = 2.5;
/** The slowest speed a request may ask for. Instructions ("speak slowly") can slow a voice too, so the bound never trusts the request's speed. */
const slowestSpeed = 0.25;
/** Everyday speech, about 150 words a minute, at speed 1. */
const typicalCharactersPerSecond = 15;
/** OpenAI prices gpt-4o-mini-tts at about $0.015 a minute with audio output at $12 per million tokens: about 21 tokens a second. */
const typicalAudioTokensPerSecond = 21;
/** `pcm`, and the `wav` around it: 24 kHz, 16-bit, mono. */
const pcmBytesPerSecond = 48_000;
const wavHeaderBytes = 44;

/** Whether an endpoint bills tokens, which are estimated when its provider reports none. */
export const tokenPriced = (c: Candidate): boolean => toPico(c.endpoint.pricing.audio_output) > 0n || toPico(c.endpoint.pricing.prompt) > 0n;

/** Whether to ask an endpoint for `stream_format: sse`: it bills audio output tokens, which only the events report. */
export const wantsEvents = (c: Candidate): boolean => toPico(c.endpoint.pricing.audio_output) > 0n;

/**
 * The most one attempt can cost: every character at the character price, a token for every byte of the
 * text, and the audio tokens of the text spoken at the slowest: characters / (2.5 a second x 0.25) seconds
 * at 50 audio tokens a second, 80 tokens a character.
 */
export const worstCase = (text: SpeechText) => (c: Candidate) =>
  mediaCost(c.endpoint.pricing, {
    characters: text.characters,
    promptTokens: Buffer.byteLength(text.input) + Buffer.byteLength(text.instructions ?? ""),
    audioOutputTokens: Math.ceil((text.characters / (slowestCharactersPerSecond * slowestSpeed)) * audioTokensPerSecond),
    completionTokens: 0,
  });

/** Seconds of the audio sent: from its bytes where the format is raw samples, else from the text at everyday pace. */
function secondsOf(text: SpeechText, format: SpeechFormat, speed: number, bytes: number): number {
  if (format === "pcm") return bytes / pcmBytesPerSecond;
  if (format === "wav") return Math.max(0, bytes - wavHeaderBytes) / pcmBytesPerSecond;
  return text.characters / typicalCharactersPerSecond / speed;
}

/**
 * Usage of an endpoint whose provider reported none: the characters, and for an endpoint that bills tokens,
 * estimated ones (text tokens as a quarter of its characters, audio tokens from the seconds spoken).
 */
function estimatedUsage(text: SpeechText, c: Candidate, seconds: number): MediaUsage {
  if (!tokenPriced(c)) return { characters: text.characters, promptTokens: 0, completionTokens: 0 };
  const textCharacters = text.characters + speechCharacters(text.instructions ?? "");
  return { characters: text.characters, promptTokens: Math.ceil(textCharacters / 4), audioOutputTokens: Math.ceil(seconds * typicalAudioTokensPerSecond), completionTokens: 0 };
}

/**
 * Usage to charge. Characters are always exact. Tokens are the provider's when it reported them; an
 * endpoint that bills tokens and reported none is charged estimated ones (the seconds sent), and the usage
 * says it is estimated.
 */
export function speechUsage(
  text: SpeechText,
  c: Candidate,
  sent: { format: SpeechFormat; speed: number; bytes: number },
  reported: SpeechUsage | undefined,
): { usage: MediaUsage; estimated: boolean } {
  if (reported) return { usage: { characters: text.characters, promptTokens: reported.inputTokens, audioOutputTokens: reported.outputTokens, completionTokens: 0 }, estimated: false };
  return { usage: estimatedUsage(text, c, secondsOf(text, sent.format, sent.speed, sent.bytes)), estimated: tokenPriced(c) };
}

/** What a speech attempt asks of its provider, estimated: every character, the text spoken at everyday pace at `speed`. */
export const askedUsage = (text: SpeechText, speed: number) => (c: Candidate): MediaUsage => estimatedUsage(text, c, text.characters / typicalCharactersPerSecond / speed);
