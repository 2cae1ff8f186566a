import { z } from "zod";
import { providerPreferencesWithOptions } from "./chat-request.js";
import { sessionId, traceConfig } from "./shared.js";

export const speechFormats = ["mp3", "opus", "aac", "flac", "wav", "pcm"] as const;
export const speechFormat = z.enum(speechFormats);
export type SpeechFormat = z.infer<typeof speechFormat>;

/** The `Content-Type` of each format's audio, as OpenAI answers it. `pcm` is raw 24 kHz 16-bit little-endian mono. */
export const speechMediaTypes: Readonly<Record<SpeechFormat, string>> = {
  mp3: "audio/mpeg",
  opus: "audio/opus",
  aac: "audio/aac",
  flac: "audio/flac",
  wav: "audio/wav",
  pcm: "audio/pcm",
};

/** Characters as people count them (code points), which is what a per-character price and the length limit count. */
export const speechCharacters = (text: string): number => {
  let count = 0;
  for (const _ of text) count++;
  return count;
};

export const maxSpeechCharacters = 4096;

const withinLimit = [(text: string) => speechCharacters(text) <= maxSpeechCharacters, `must be at most ${maxSpeechCharacters} characters`] as const;

/** Routing preferences as chat takes them, plus settings passed to the named provider untouched. */
/** A voice by name, or OpenAI's custom voice object. */
const speechVoice = z.union([z.string().min(1, "must not be empty").max(256), z.object({ id: z.string().min(1, "must not be empty") })]);

/** `POST /audio/speech`. An unknown field is a 400 naming it: nothing the gateway cannot honour is taken silently. */
export const speechRequest = z.strictObject({
  model: z.string().min(1, "must not be empty"),
  input: z.string().min(1, "must not be empty").refine(...withinLimit).describe("Text to speak"),
  voice: speechVoice.optional().describe("Left out: alloy on OpenAI-format endpoints"),
  response_format: speechFormat.optional().describe("mp3 (default), opus, aac, flac, wav or pcm (raw 24 kHz 16-bit little-endian mono)"),
  speed: z.number().min(0.25).max(4).optional().describe("0.25 to 4; 1 when left out"),
  instructions: z.string().refine(...withinLimit).optional().describe("How to speak: tone, accent, pace (endpoints that list instructions among their parameters)"),
  stream_format: z
    .literal("audio", { error: "only audio is supported: the gateway streams the audio bytes themselves" })
    .optional()
    .describe("audio, the only format: the answer is the audio bytes, streamed as the provider makes them"),
  input_references: z
    .array(z.unknown())
    .refine((references) => references.length === 0, "voice cloning is not supported: no endpoint of this gateway takes input_references")
    .optional(),
  provider: providerPreferencesWithOptions.optional(),
  session_id: sessionId.optional(),
  trace: traceConfig.optional(),
  user: z.string().max(256).optional().describe("End user, recorded on the generation; never sent to the provider"),
});
export type SpeechRequest = z.infer<typeof speechRequest>;
