import { post, readAnswer, UpstreamError } from "@switchyard/upstream";
import { z } from "zod";
import type { TranscriptionCall, TranscriptionProvider, TranscriptSegment, TranscriptWord, UpstreamTarget } from "./types.js";

const word = z.looseObject({
  word: z.string(),
  punctuated_word: z.string().nullish(),
  start: z.number(),
  end: z.number(),
  confidence: z.number().nullish(),
  speaker: z.number().int().nullish(),
});

const utterance = z.looseObject({
  start: z.number(),
  end: z.number(),
  transcript: z.string(),
  confidence: z.number().nullish(),
  speaker: z.number().int().nullish(),
});

const answer = z.looseObject({
  metadata: z.looseObject({ duration: z.number().nonnegative().nullish() }).nullish(),
  results: z.looseObject({
    channels: z
      .array(
        z.looseObject({
          detected_language: z.string().nullish(),
          alternatives: z.array(z.looseObject({ transcript: z.string(), words: z.array(word).nullish() })).min(1),
        }),
      )
      .min(1),
    utterances: z.array(utterance).nullish(),
  }),
});

/** Deepgram reads booleans and numbers from their text; objects have no query form, so they go as JSON. */
const paramValue = (value: unknown): string => (typeof value === "object" && value !== null ? JSON.stringify(value) : String(value));

/** Utterances are Deepgram's nearest thing to Whisper's segments; they cost nothing extra but are only sent when asked. */
const wantsSegments = (call: TranscriptionCall) => call.verbose && (call.granularities.length === 0 || call.granularities.includes("segment"));

function query(call: TranscriptionCall, target: UpstreamTarget): URLSearchParams {
  const params = new URLSearchParams({ model: target.upstreamModel });
  if (call.language !== undefined) params.set("language", call.language);
  else params.set("detect_language", "true");
  params.set("smart_format", "true");
  if (wantsSegments(call)) params.set("utterances", "true");
  // Options may turn off the defaults above (smart_format=false) but not change which model is billed.
  for (const [key, value] of Object.entries(call.options)) {
    if (key === "model" || value === undefined || value === null) continue;
    params.delete(key);
    for (const item of Array.isArray(value) ? (value as unknown[]) : [value]) params.append(key, paramValue(item));
  }
  return params;
}

const toWord = (w: z.infer<typeof word>): TranscriptWord => ({
  word: w.punctuated_word ?? w.word,
  start: w.start,
  end: w.end,
  ...(w.confidence != null ? { confidence: w.confidence } : {}),
  ...(w.speaker != null ? { speaker: w.speaker } : {}),
});

const toSegment = (u: z.infer<typeof utterance>, id: number): TranscriptSegment => ({
  id,
  start: u.start,
  end: u.end,
  text: u.transcript,
  ...(u.confidence != null ? { confidence: u.confidence } : {}),
  ...(u.speaker != null ? { speaker: u.speaker } : {}),
});

/**
 * Deepgram's pre-recorded `/listen`: raw audio in the body, every setting in the query string. It has no
 * prompt and no temperature, so a request setting either is not sent here.
 */
export const deepgram: TranscriptionProvider = {
  verbose: true,
  prompts: false,
  temperature: false,
  async transcribe(call, target, signal) {
    const res = await post(
      target.provider,
      `${target.baseUrl.replace(/\/$/, "")}/listen?${query(call, target).toString()}`,
      { ...(target.apiKey ? { authorization: `Token ${target.apiKey}` } : {}), "content-type": call.audio.mediaType },
      call.audio.bytes,
      signal,
    );
    const parsed = answer.safeParse(await readAnswer(target.provider, res, signal));
    if (!parsed.success) throw new UpstreamError(`${target.provider} sent a response that is not a transcription`, 502, true);
    const { metadata, results } = parsed.data;
    const channel = results.channels[0]!;
    const best = channel.alternatives[0]!;
    const duration = metadata?.duration ?? undefined;
    return {
      text: best.transcript,
      language: channel.detected_language ?? undefined,
      duration,
      segments: call.verbose ? results.utterances?.map(toSegment) : undefined,
      words: call.verbose && call.granularities.includes("word") ? best.words?.map(toWord) : undefined,
      usage: { seconds: duration },
    };
  },
};
