import {
  modelId,
  providerPreferencesWithOptions,
  traceConfig,
  transcriptionMultipartFields,
  transcriptionRequest,
  type ProviderPreferences,
} from "@switchyard/contracts";
import { badRequest, HttpError, parseInput, readMultipart } from "@switchyard/runtime";
import type { Request } from "express";
import { z } from "zod";
import { fallbackModels, refuseUnknown, type Presetted } from "../body.js";
import type { AudioInput } from "../providers/types.js";
import { audioInput, AudioRejected } from "./audio.js";
import { iso6391 } from "./languages.js";

/** A transcription request, from either body style, checked and with its audio decoded. */
export interface TranscriptionInput {
  model: string;
  /** Fallback models (`models`), tried in order. */
  models: string[] | undefined;
  /** The preset the model named, applied already. */
  preset: Presetted | undefined;
  audio: AudioInput;
  language: string | undefined;
  prompt: string | undefined;
  temperature: number | undefined;
  verbose: boolean;
  granularities: Array<"word" | "segment">;
  preferences: ProviderPreferences | undefined;
  /** `provider.options`, by provider slug. */
  options: Record<string, Record<string, unknown>>;
  sessionId: string | undefined;
  /** The caller's end user, recorded on the generation (no transcription wire format takes one). */
  user: string | undefined;
  /** Tracing metadata for broadcast destinations. */
  trace: Record<string, unknown> | undefined;
}

/** Applies the preset a body's model names (`form`: a multipart form's fields); `takes` lists the fields the route handles. */
export type PresetDefaults = (body: unknown, takes: readonly string[], form: boolean) => Promise<{ body: unknown; preset: Presetted | undefined }>;

const noStream = { error: "streamed transcription is not supported: leave stream out, or send false" };

/** What the JSON body takes beside the contract's fields: fallback models, and `stream` where it asks for what the gateway does. */
const jsonExtras = z.object({ models: fallbackModels.optional(), stream: z.literal(false, noStream).optional() });
const jsonTakes = [...Object.keys(transcriptionRequest.shape), ...Object.keys(jsonExtras.shape)];

/** A form field that may arrive once or repeated. */
const repeated = <T extends z.ZodType>(item: T) => z.union([item, z.array(item)]).transform((value) => (Array.isArray(value) ? value : [value]) as z.output<T>[]);

/**
 * What the multipart form takes beside the contract's text fields: the file part's name, `provider` and
 * `trace` as JSON text, the audio's `format`, fallback models as repeated `models` or `models[]` fields (the
 * openai SDK's form of a list), and `stream` as the openai SDK sends false.
 */
const formExtras = z.object({
  file: z.unknown().optional(),
  provider: z.unknown().optional(),
  trace: z.unknown().optional(),
  format: z.unknown().optional(),
  models: repeated(modelId).optional(),
  "models[]": repeated(modelId).optional(),
  stream: z.literal("false", noStream).optional(),
});
const formTakes = [...Object.keys(transcriptionMultipartFields.shape), ...Object.keys(formExtras.shape)];

/** The fallback models a form names, by either field name, checked as the JSON body's are. */
function formModels(fields: z.infer<typeof formExtras>): string[] | undefined {
  const models = [...(fields.models ?? []), ...(fields["models[]"] ?? [])];
  return models.length ? parseInput(z.object({ models: fallbackModels }), { models }, "body").models : undefined;
}

const traced = z.object({ trace: traceConfig.optional() });

/** `trace` in a form is JSON text, like `provider`; in a JSON body it is an object. */
function traceField(value: unknown): Record<string, unknown> | undefined {
  let trace = value;
  if (typeof value === "string") {
    try {
      trace = JSON.parse(value);
    } catch {
      throw badRequest("Invalid body: trace: must be a JSON object");
    }
  }
  return parseInput(traced, { trace }, "body").trace;
}

const routing = z.object({ provider: providerPreferencesWithOptions.optional() });
const tooLarge = (limit: number) => new HttpError("payload_too_large", `Request payload too large: the audio may be at most ${limit} bytes`);

function decodeAudio(bytes: Buffer, format: string | undefined, where: string): AudioInput {
  try {
    return audioInput(bytes, format);
  } catch (error) {
    if (error instanceof AudioRejected) throw badRequest(`Invalid body: ${where}: ${error.message}`);
    throw error;
  }
}

function checkLanguage(language: string | undefined): void {
  if (language !== undefined && !iso6391.has(language)) throw badRequest(`Invalid body: language: ${language} is not an ISO-639-1 language code`);
}

/** `provider` in a form is JSON text; in a JSON body it is an object. */
function providerField(value: unknown): { preferences: ProviderPreferences | undefined; options: TranscriptionInput["options"] } {
  const { provider } = parseInput(routing, { provider: value }, "body");
  const options = (provider?.options ?? {}) as TranscriptionInput["options"];
  return { preferences: provider, options };
}

/** Reads `POST /audio/transcriptions`: JSON with base64 audio, or an OpenAI-style multipart upload. */
export async function readTranscription(req: Request, maxAudioBytes: number, presets: PresetDefaults): Promise<TranscriptionInput> {
  const type = (req.headers["content-type"] ?? "").toLowerCase();
  if (type.startsWith("multipart/form-data")) {
    const upload = await readMultipart(req, maxAudioBytes);
    refuseUnknown(upload.fields, formTakes);
    if (!upload.file) throw badRequest("Invalid body: file: an audio file part is required");
    const { body, preset } = await presets(upload.fields, formTakes, true);
    const fields = parseInput(transcriptionMultipartFields, body, "body");
    const extras = parseInput(formExtras, body, "body");
    checkLanguage(fields.language);
    const extension = /\.([a-z0-9]+)$/i.exec(upload.file.filename ?? "")?.[1];
    const named = typeof fields.format === "string" ? fields.format : undefined;
    let provider: unknown;
    if (typeof fields.provider === "string") {
      try {
        provider = JSON.parse(fields.provider);
      } catch {
        throw badRequest("Invalid body: provider: must be a JSON object");
      }
    }
    const format = named ?? (extension && extension.toLowerCase() !== "bin" ? extension : undefined);
    return {
      model: fields.model,
      models: formModels(extras),
      preset,
      audio: decodeAudio(upload.file.bytes, format, "file"),
      language: fields.language,
      prompt: fields.prompt,
      temperature: fields.temperature,
      verbose: fields.response_format === "verbose_json",
      granularities: fields["timestamp_granularities[]"] ?? [],
      ...providerField(provider),
      sessionId: fields.session_id,
      user: fields.user,
      trace: traceField(fields.trace),
    };
  }
  if (!type.startsWith("application/json")) {
    throw badRequest("Send application/json with input_audio, or multipart/form-data with a file part");
  }
  refuseUnknown(req.body, jsonTakes);
  const { body: merged, preset } = await presets(req.body, jsonTakes, false);
  const body = parseInput(transcriptionRequest, merged, "body");
  const { models } = parseInput(jsonExtras, merged, "body");
  checkLanguage(body.language);
  // Base64 is 4 characters per 3 bytes: the length says the size before anything is decoded.
  if (Math.floor((body.input_audio.data.length * 3) / 4) > maxAudioBytes + 2) throw tooLarge(maxAudioBytes);
  const bytes = Buffer.from(body.input_audio.data, "base64");
  if (bytes.length > maxAudioBytes) throw tooLarge(maxAudioBytes);
  return {
    model: body.model,
    models,
    preset,
    audio: decodeAudio(bytes, body.input_audio.format, "input_audio.data"),
    language: body.language,
    prompt: body.prompt,
    temperature: body.temperature,
    verbose: body.response_format === "verbose_json",
    granularities: body.timestamp_granularities ?? [],
    ...providerField(body.provider),
    sessionId: body.session_id,
    user: body.user,
    trace: body.trace,
  };
}
