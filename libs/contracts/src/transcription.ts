import { z } from "zod";
import { jsonObject, sessionId, traceConfig } from "./shared.js";

export const transcriptionFormat = z.enum(["json", "verbose_json"]);
export const timestampGranularity = z.enum(["word", "segment"]);

const base64 = z.string().min(1, "must not be empty").regex(/^[A-Za-z0-9+/]+={0,2}$/, "must be base64");
const language = z.string().regex(/^[a-z]{2}$/, "must be an ISO-639-1 code such as en");

/** Text that guides the transcript's style or continues an earlier segment; only OpenAI's wire format takes it. */
const transcriptionPrompt = z.string().max(4000, "must be at most 4000 characters").describe("Guides the style or continues an earlier segment (OpenAI-format endpoints)");

/** Settings passed to the provider untouched, keyed by provider slug under `options`. */
const transcriptionProvider = z.looseObject({ options: z.record(z.string(), jsonObject).optional() });

/** `POST /audio/transcriptions` with a JSON body of base64 audio. */
export const transcriptionRequest = z.looseObject({
  input_audio: z.object({
    data: base64.describe("Base64-encoded audio"),
    format: z.string().min(1, "must not be empty").max(32).describe("Container name, e.g. wav, mp3"),
  }),
  model: z.string().min(1, "must not be empty"),
  language: language.optional().describe("Auto-detected when omitted"),
  prompt: transcriptionPrompt.optional(),
  provider: transcriptionProvider.optional(),
  response_format: transcriptionFormat.optional().describe("json (default) or verbose_json"),
  temperature: z.number().min(0).optional(),
  timestamp_granularities: z
    .array(timestampGranularity)
    .optional()
    .describe("Used only with verbose_json; word adds the words array"),
  session_id: sessionId.optional(),
  trace: traceConfig.optional(),
  user: z.string().optional(),
});
export type TranscriptionRequest = z.infer<typeof transcriptionRequest>;

/** A form field that may arrive once or repeated (`timestamp_granularities[]`). */
const repeated = <T extends z.ZodType>(item: T) =>
  z.union([item, z.array(item)]).transform((value) => (Array.isArray(value) ? value : [value]) as z.output<T>[]);

/**
 * The text fields of the OpenAI-style multipart upload (the audio is the `file` part). Form values
 * are strings, so numbers are parsed here.
 */
export const transcriptionMultipartFields = z.looseObject({
  model: z.string().min(1, "must not be empty"),
  language: language.optional(),
  prompt: transcriptionPrompt.optional(),
  response_format: transcriptionFormat.optional(),
  temperature: z
    .string()
    .regex(/^\d+(\.\d+)?$/, "must be a number")
    .transform(Number)
    .pipe(z.number().min(0))
    .optional(),
  "timestamp_granularities[]": repeated(timestampGranularity).optional(),
  session_id: sessionId.optional(),
  user: z.string().optional(),
});
export type TranscriptionMultipartFields = z.infer<typeof transcriptionMultipartFields>;

/** The multipart body as documented: the file part plus the text fields. */
export const transcriptionMultipartBody = transcriptionMultipartFields.extend({
  file: z.string().describe("The audio file (binary part)").meta({ format: "binary" }),
});

export const transcriptionSegment = z.object({
  id: z.number().int(),
  start: z.number().describe("Seconds"),
  end: z.number().describe("Seconds"),
  text: z.string(),
  seek: z.number().int().optional(),
  tokens: z.array(z.number().int()).optional(),
  temperature: z.number().optional(),
  avg_logprob: z.number().optional(),
  compression_ratio: z.number().optional(),
  no_speech_prob: z.number().optional(),
  speaker: z.number().int().optional(),
});

export const transcriptionWord = z.object({
  word: z.string(),
  start: z.number(),
  end: z.number(),
  confidence: z.number().optional(),
  speaker: z.number().int().optional(),
});

export const transcriptionUsage = z.object({
  cost: z.number().min(0),
  input_tokens: z.number().int().min(0),
  output_tokens: z.number().int().min(0),
  seconds: z.number().min(0),
  total_tokens: z.number().int().min(0),
});

/** 200 body; the verbose fields appear only with `response_format: verbose_json`. */
export const transcriptionResponse = z.object({
  text: z.string(),
  usage: transcriptionUsage,
  task: z.string().optional(),
  language: z.string().optional().describe("Detected or forced language"),
  duration: z.number().optional().describe("Seconds"),
  segments: z.array(transcriptionSegment).optional(),
  words: z.array(transcriptionWord).optional(),
});
export type TranscriptionResponse = z.infer<typeof transcriptionResponse>;
