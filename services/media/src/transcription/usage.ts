import { audioSeconds, worstCaseSeconds, type Candidate } from "@switchyard/upstream";
import { audioTokensPerSecond, mediaCost, transcriptTokensPerSecond, type MediaUsage } from "../cost.js";
import type { UpstreamTranscription } from "../providers/types.js";

const estimateTokens = (text: string) => Math.ceil(text.length / 4);

/** OpenAI bills gpt-4o-transcribe's audio at about 1,000 tokens a minute. */
const typicalAudioTokensPerSecond = 17;
/** A transcript of everyday speech, about 150 words a minute, is about 4 tokens a second. */
const typicalTranscriptTokensPerSecond = 4;

/**
 * Usage as the provider reported it. A provider that reports neither seconds nor tokens is charged for the
 * audio's length and the transcript's estimated tokens, and the usage is marked estimated. The length is the
 * provider's duration, else the one the gateway reads (`audioSeconds`), else the hold's bound of a second per
 * 1,000 bytes.
 */
export function transcriptionUsage(answer: UpstreamTranscription, audio: Buffer): { usage: MediaUsage; estimated: boolean } {
  const reported = answer.usage;
  const seconds = reported.seconds ?? answer.duration ?? audioSeconds(audio);
  const estimated = reported.seconds === undefined && reported.inputTokens === undefined && reported.outputTokens === undefined;
  return {
    usage: {
      seconds: seconds ?? worstCaseSeconds(audio),
      audioTokens: reported.inputTokens ?? 0,
      promptTokens: 0,
      completionTokens: reported.outputTokens ?? (estimated ? estimateTokens(answer.text) : 0),
    },
    estimated: estimated || seconds === undefined,
  };
}

/**
 * The most one attempt can cost: the audio's longest length, rounded up to whole seconds (a provider may bill
 * them so), at the fastest token rates.
 */
export const worstCase = (audio: Buffer) => {
  const seconds = Math.ceil(worstCaseSeconds(audio));
  return (c: Candidate): bigint =>
    mediaCost(c.endpoint.pricing, {
      seconds,
      audioTokens: Math.ceil(seconds * audioTokensPerSecond),
      promptTokens: 0,
      completionTokens: Math.ceil(seconds * transcriptTokensPerSecond) + 100,
    });
};

/** What a transcription asks of its provider, estimated: the audio's length, at typical token rates. */
export const askedUsage = (audio: Buffer) => {
  const seconds = audioSeconds(audio) ?? worstCaseSeconds(audio);
  return (): MediaUsage => ({
    seconds,
    audioTokens: Math.ceil(seconds * typicalAudioTokensPerSecond),
    promptTokens: 0,
    completionTokens: Math.ceil(seconds * typicalTranscriptTokensPerSecond),
  });
};
