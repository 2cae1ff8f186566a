import {
  ImageGenCompletedEvent$inboundSchema,
  ImageGenerationRequest$outboundSchema,
  ImageGenerationResponse$inboundSchema,
  ImageGenPartialImageEvent$inboundSchema,
  ImageGenStreamErrorEvent$inboundSchema,
  STTRequest$outboundSchema,
  STTResponse$inboundSchema,
} from "@openrouter/sdk/models";
import { describe, expect, it } from "vitest";
import { issuePaths, wire } from "../../../tests/support/schema-checks.js";
import type { z } from "zod";
import {
  imageGenerationRequest,
  imageGenerationResponse,
  imageStreamEvent,
  resolutionOfPixels,
  type ImageGenerationResponse,
  type ImageStreamEvent,
} from "./images.js";
import {
  transcriptionMultipartFields,
  transcriptionRequest,
  transcriptionResponse,
  type TranscriptionResponse,
} from "./transcription.js";

describe("POST /audio/transcriptions", () => {
  const body = { model: "openai/whisper-1", input_audio: { data: "UklGRiQAAABXQVZF", format: "wav" } };

  it("accepts JSON bodies, including one serialized by the SDK", () => {
    expect(issuePaths(transcriptionRequest, body)).toEqual([]);
    const verbose = { ...body, language: "en", response_format: "verbose_json", temperature: 0, timestamp_granularities: ["word", "segment"], provider: { options: { openai: { prompt: "x" } } } };
    expect(issuePaths(transcriptionRequest, verbose)).toEqual([]);
    const sdk = STTRequest$outboundSchema.parse({ model: "m", inputAudio: { data: "AAAA", format: "mp3" }, timestampGranularities: ["word"], responseFormat: "verbose_json", sessionId: "s" });
    expect(issuePaths(transcriptionRequest, wire(sdk))).toEqual([]);
  });

  it.each([
    ["input_audio", { input_audio: undefined }],
    ["input_audio.data", { input_audio: { data: "", format: "wav" } }],
    ["input_audio.data", { input_audio: { data: "not base64!", format: "wav" } }],
    ["input_audio.format", { input_audio: { data: "AAAA" } }],
    ["model", { model: "" }],
    ["language", { language: "english" }],
    ["response_format", { response_format: "srt" }],
    ["temperature", { temperature: -1 }],
    ["timestamp_granularities.0", { timestamp_granularities: ["char"] }],
    ["session_id", { session_id: "s".repeat(257) }],
  ])("rejects a bad %s", (field, patch) => {
    expect(issuePaths(transcriptionRequest, { ...body, ...patch })).toContain(field);
  });

  it("reads the multipart text fields, with the SDK's repeated timestamp_granularities[]", () => {
    const fields = transcriptionMultipartFields.parse({ model: "m", temperature: "0.2", "timestamp_granularities[]": "word" });
    expect(fields).toMatchObject({ temperature: 0.2, "timestamp_granularities[]": ["word"] });
    const many = transcriptionMultipartFields.parse({ model: "m", "timestamp_granularities[]": ["word", "segment"] });
    expect(many["timestamp_granularities[]"]).toEqual(["word", "segment"]);
    expect(issuePaths(transcriptionMultipartFields, { model: "m", temperature: "warm" })).toEqual(["temperature"]);
  });

  it("answers text and usage, plus the verbose fields, in a shape the SDK accepts", () => {
    const plain: TranscriptionResponse = { text: "hi", usage: { cost: 0.0001, input_tokens: 10, output_tokens: 2, seconds: 1.5, total_tokens: 12 } };
    const verbose: TranscriptionResponse = {
      ...plain,
      task: "transcribe",
      language: "en",
      duration: 1.5,
      segments: [{ id: 0, start: 0, end: 1.5, text: "hi", seek: 0, tokens: [1], temperature: 0, avg_logprob: -0.1, compression_ratio: 1, no_speech_prob: 0 }],
      words: [{ word: "hi", start: 0, end: 0.4 }],
    };
    for (const sample of [plain, verbose]) {
      expect(issuePaths(transcriptionResponse, sample)).toEqual([]);
      expect(STTResponse$inboundSchema.safeParse(wire(sample)).success).toBe(true);
    }
    expect(issuePaths(transcriptionResponse, { text: "hi" })).toEqual(["usage"]);
    expect(issuePaths(transcriptionResponse, { ...plain, usage: { ...plain.usage, input_tokens: 1.5 } })).toEqual(["usage.input_tokens"]);
  });
});

describe("POST /images", () => {
  const body = { model: "google/gemini-2.5-flash-image", prompt: "A lighthouse at dusk" };

  it("accepts every field of the spec's table, and the SDK's serialization", () => {
    const full = {
      ...body,
      aspect_ratio: "19.5:9",
      background: "transparent",
      input_references: Array.from({ length: 16 }, () => ({ type: "image_url", image_url: { url: "https://example.com/r.png" } })),
      n: 10,
      output_compression: 100,
      output_format: "webp",
      provider: { only: ["google-ai-studio"], options: { "google-ai-studio": { safety: "low" } } },
      quality: "high",
      resolution: "4K",
      seed: 7,
      size: "4K",
      stream: true,
    };
    expect(issuePaths(imageGenerationRequest, full)).toEqual([]);
    const refs = [{ type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } }];
    expect(issuePaths(imageGenerationRequest, { ...body, input_references: refs, n: 1, output_compression: 0 })).toEqual([]);
    const sdk = ImageGenerationRequest$outboundSchema.parse({ ...body, aspectRatio: "16:9", outputFormat: "png", inputReferences: [{ type: "image_url", imageUrl: { url: "https://e.com/a.png" } }] });
    expect(issuePaths(imageGenerationRequest, wire(sdk))).toEqual([]);
  });

  it.each([
    ["model", { model: "" }],
    ["prompt", { prompt: "" }],
    ["aspect_ratio", { aspect_ratio: "7:3" }],
    ["background", { background: "blurred" }],
    ["background", { background: "transparent", output_format: "jpeg" }],
    ["input_references", { input_references: Array.from({ length: 17 }, () => ({ type: "image_url", image_url: { url: "https://e.com/a.png" } })) }],
    ["input_references.0.image_url.url", { input_references: [{ type: "image_url", image_url: { url: "ftp://e.com/a.png" } }] }],
    ["n", { n: 0 }],
    ["n", { n: 11 }],
    ["n", { n: 1.5 }],
    ["output_compression", { output_compression: -1 }],
    ["output_compression", { output_compression: 101 }],
    ["output_format", { output_format: "gif" }],
    ["quality", { quality: "ultra" }],
    ["resolution", { resolution: "8K" }],
    ["seed", { seed: 0.5 }],
    ["size", { size: "huge" }],
    ["size", { size: "0x512" }],
    ["stream", { stream: "yes" }],
  ])("rejects a bad %s", (field, patch) => {
    expect(issuePaths(imageGenerationRequest, { ...body, ...patch })).toContain(field);
  });

  it("treats explicit pixels as authoritative and rejects a mismatched resolution or aspect_ratio", () => {
    const ok = (patch: object) => expect(issuePaths(imageGenerationRequest, { ...body, ...patch })).toEqual([]);
    ok({ size: "1024x1024", aspect_ratio: "1:1", resolution: "1K" });
    ok({ size: "1376x768", aspect_ratio: "16:9", resolution: "1K" });
    ok({ size: "2K", aspect_ratio: "16:9" });
    ok({ size: "1024x576", aspect_ratio: "auto" });
    ok({ background: "transparent", output_format: "png" });
    ok({ background: "transparent" });
    expect(issuePaths(imageGenerationRequest, { ...body, size: "1024x1024", aspect_ratio: "16:9" })).toEqual(["aspect_ratio"]);
    expect(issuePaths(imageGenerationRequest, { ...body, size: "1024x1024", resolution: "2K" })).toEqual(["resolution"]);
    expect(issuePaths(imageGenerationRequest, { ...body, size: "2K", resolution: "4K" })).toEqual(["resolution"]);
    expect([resolutionOfPixels(512, 512), resolutionOfPixels(1584, 672), resolutionOfPixels(2048, 2048), resolutionOfPixels(6336, 2688)]).toEqual(["512", "1K", "2K", "4K"]);
  });

  it("answers with b64_json images in a shape the SDK accepts, streamed or not", () => {
    const response: ImageGenerationResponse = {
      created: 1_767_225_600,
      data: [{ b64_json: "iVBORw0KGgo=", media_type: "image/png" }],
      usage: { prompt_tokens: 10, completion_tokens: 1290, total_tokens: 1300, cost: 0.039 },
    };
    expect(issuePaths(imageGenerationResponse, response)).toEqual([]);
    expect(ImageGenerationResponse$inboundSchema.safeParse(wire(response)).success).toBe(true);
    expect(issuePaths(imageGenerationResponse, { data: [] })).toEqual(["created"]);

    const events: [ImageStreamEvent, z.ZodType][] = [
      [{ type: "image_generation.partial_image", b64_json: "AAAA", partial_image_index: 0 }, ImageGenPartialImageEvent$inboundSchema],
      [{ type: "image_generation.completed", b64_json: "AAAA", created: 1, usage: response.usage }, ImageGenCompletedEvent$inboundSchema],
      [{ type: "error", error: { message: "Provider returned error", code: "502" } }, ImageGenStreamErrorEvent$inboundSchema],
    ];
    for (const [event, sdkSchema] of events) {
      expect(issuePaths(imageStreamEvent, event)).toEqual([]);
      expect(sdkSchema.safeParse(wire(event)).success).toBe(true);
    }
  });
});
