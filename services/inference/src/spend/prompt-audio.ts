import { worstCaseSeconds } from "@switchyard/upstream";

/**
 * The most audio tokens a provider in the catalog counts per second of a prompt's audio: Gemini's 32 ("Gemini
 * represents each second of audio as 32 tokens", https://ai.google.dev/gemini-api/docs/tokens). OpenAI counts
 * a token per 100 ms of user audio, 10 a second (https://developers.openai.com/api/docs/guides/realtime-costs);
 * Mistral's Voxtral a token per 80 ms, 12.5 a second.
 */
export const audioTokensPerSecond = 32;

/**
 * An upper bound on the tokens a provider bills for one audio clip of a prompt (chat's `input_audio.data`:
 * base64, without or with a `data:` URL's prefix). Its longest length as the transcription hold reads it
 * (`worstCaseSeconds`): exact for PCM WAV; for MP3, FLAC, Ogg, MP4/M4A, WebM and ADTS the length at 8 kbit/s
 * (a second per 1,000 bytes, below every bitrate speech uploads are encoded at) or the length read from the
 * frames when that is longer; for bytes in no container the gateway reads (raw PCM, AIFF) a second per 1,000
 * bytes too, where 16-bit PCM at 8 kHz spends 16,000. Whole seconds, rounded up, at `audioTokensPerSecond`.
 */
export function audioTokenBound(data: string): number {
  const base64 = data.startsWith("data:") ? data.slice(data.indexOf(",") + 1) : data;
  return Math.ceil(worstCaseSeconds(Buffer.from(base64, "base64"))) * audioTokensPerSecond;
}
