import type { SpeechFormat } from "@switchyard/contracts";
import type { ImageFormat, ImageWireFormat, UpstreamTarget } from "@switchyard/upstream";

export type { UpstreamTarget } from "@switchyard/upstream";

/** Decoded audio as the caller sent it (JSON base64 or a multipart file part). */
export interface AudioInput {
  bytes: Buffer;
  /** Container name as the caller gave it or as sniffed: wav, mp3, flac, ogg, webm, m4a, mp4... */
  format: string;
  /** MIME type for the container, e.g. audio/wav. */
  mediaType: string;
  /** A file name with the right extension; some servers pick the decoder by it. */
  filename: string;
}

export interface TranscriptionCall {
  audio: AudioInput;
  /** ISO-639-1; omitted means auto-detect. */
  language?: string | undefined;
  /** Guides the transcript's style; only wire formats with `prompts` take it. */
  prompt?: string | undefined;
  /** Only wire formats with `temperature` take it. */
  temperature?: number | undefined;
  /** `response_format: verbose_json`: duration, language, segments (and words when asked). */
  verbose: boolean;
  granularities: Array<"word" | "segment">;
  /** `provider.options[<slug>]`, passed to the provider untouched. */
  options: Record<string, unknown>;
}

export interface TranscriptSegment {
  id: number;
  start: number;
  end: number;
  text: string;
  [extra: string]: unknown;
}

export interface TranscriptWord {
  word: string;
  start: number;
  end: number;
  confidence?: number;
  speaker?: number;
}

/** What a provider reported; missing usage figures are left undefined, never guessed here. */
export interface UpstreamTranscription {
  text: string;
  language?: string | undefined;
  /** Seconds of audio. */
  duration?: number | undefined;
  segments?: TranscriptSegment[] | undefined;
  words?: TranscriptWord[] | undefined;
  usage: { seconds?: number | undefined; inputTokens?: number | undefined; outputTokens?: number | undefined };
}

export interface TranscriptionProvider {
  /** Whether the wire format gives segment timestamps (needed for `verbose_json`). */
  readonly verbose: boolean;
  /** Whether it takes a text prompt. */
  readonly prompts: boolean;
  /** Whether it takes a sampling temperature. */
  readonly temperature: boolean;
  transcribe(call: TranscriptionCall, target: UpstreamTarget, signal: AbortSignal): Promise<UpstreamTranscription>;
}

export type { ImageFormat };

/** One reference image, already fetched or decoded and checked. */
export interface ReferenceImage {
  bytes: Buffer;
  mediaType: string;
}

export interface ImageCall {
  prompt: string;
  n: number;
  /** One of the spec's ratios other than `auto` (absent means the provider's default). */
  aspectRatio?: string | undefined;
  background?: "auto" | "transparent" | "opaque" | undefined;
  outputFormat?: ImageFormat | undefined;
  outputCompression?: number | undefined;
  quality?: "auto" | "low" | "medium" | "high" | undefined;
  resolution?: "512" | "1K" | "2K" | "4K" | undefined;
  /** Explicit pixels from `size: <w>x<h>`. */
  size?: { width: number; height: number } | undefined;
  seed?: number | undefined;
  /** `low` relaxes the provider's content moderation; `auto` is its default. */
  moderation?: "auto" | "low" | undefined;
  /** The end user, as a per-workspace hash: never the caller's raw id. */
  user?: string | undefined;
  references: ReferenceImage[];
  /** `provider.options[<slug>]`, passed to the provider untouched. */
  options: Record<string, unknown>;
}

export interface GeneratedImage {
  /** Base64 of the image bytes (for svg: of the UTF-8 markup). */
  b64: string;
  mediaType: string;
}

export interface ImageUsage {
  promptTokens: number;
  completionTokens: number;
}

export interface UpstreamImages {
  images: GeneratedImage[];
  usage?: ImageUsage | undefined;
}

/** Parts of a natively streamed generation, in order: partial images, then each finished image, then usage. */
export type ImageStreamPart =
  | { type: "partial"; b64: string; index: number }
  | { type: "image"; image: GeneratedImage }
  | { type: "usage"; usage: ImageUsage };

/** An image wire format's calls; what it can do is the shared table the catalog describes endpoints from. */
export interface ImageProvider extends ImageWireFormat {
  generate(call: ImageCall, target: UpstreamTarget, signal: AbortSignal): Promise<UpstreamImages>;
  /** Native streaming (present exactly when `streams`); resolves once the provider accepted the request, throws before that. */
  stream?(call: ImageCall, target: UpstreamTarget, signal: AbortSignal): Promise<AsyncIterable<ImageStreamPart>>;
}

export interface SpeechCall {
  input: string;
  /** A voice name or a custom voice object; left out, the wire format's default voice. */
  voice?: string | { id: string } | undefined;
  format: SpeechFormat;
  speed?: number | undefined;
  /** How to speak; only sent to endpoints that list `instructions` among their parameters. */
  instructions?: string | undefined;
  /** Ask for the audio as events whose last reports the tokens used (token-priced endpoints). */
  events: boolean;
  /** `provider.options[<slug>]`, passed to the provider untouched. */
  options: Record<string, unknown>;
}

export interface SpeechUsage {
  inputTokens: number;
  outputTokens: number;
}

/** Parts of spoken audio, in order: audio bytes as the provider sends them, then its usage when it reports one. */
export type SpeechPart = { type: "audio"; bytes: Uint8Array } | { type: "usage"; usage: SpeechUsage };

export interface SpeechProvider {
  /** Resolves once the provider accepted the request (throws before that); the audio follows as it is made. */
  speak(call: SpeechCall, target: UpstreamTarget, signal: AbortSignal): Promise<AsyncIterable<SpeechPart>>;
}
