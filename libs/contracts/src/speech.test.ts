import { SpeechRequest$outboundSchema } from "@openrouter/sdk/models";
import { describe, expect, it } from "vitest";
import { issuePaths, wire } from "../../../tests/support/schema-checks.js";
import { buildOpenApiDocument } from "./openapi.js";
import { routes } from "./routes.js";
import { speechCharacters, speechRequest } from "./speech.js";

describe("POST /audio/speech", () => {
  it("accepts what the SDK sends and what OpenAI's clients send", () => {
    const sdk = SpeechRequest$outboundSchema.parse({ model: "openai/tts-1", input: "Hello", voice: "alloy", speed: 1.25, sessionId: "s", provider: { options: { openai: { x: 1 } } } });
    expect(issuePaths(speechRequest, wire(sdk))).toEqual([]);
    const openai = { model: "gpt-4o-mini-tts", input: "Hello", voice: { id: "voice_1234" }, instructions: "Calm", response_format: "flac", stream_format: "audio" };
    expect(issuePaths(speechRequest, openai)).toEqual([]);
    expect(issuePaths(speechRequest, { model: "m", input: "x", provider: { order: ["openai"], allow_fallbacks: false } })).toEqual([]);
  });

  it.each([
    ["input", { input: "" }],
    ["input", { input: "a".repeat(4097) }],
    ["instructions", { instructions: "a".repeat(4097) }],
    ["response_format", { response_format: "ogg" }],
    ["speed", { speed: 0 }],
    ["stream_format", { stream_format: "sse" }],
    ["input_references", { input_references: [{ type: "text", text: "me" }] }],
  ])("refuses a bad %s", (path, patch) => {
    expect(issuePaths(speechRequest, { model: "m", input: "Hello", ...patch })).toEqual([path]);
  });

  it("counts code points, so a per-character price charges what people count", () => {
    expect(speechCharacters("Grüße 😀")).toBe(7);
    expect(issuePaths(speechRequest, { model: "m", input: "😀".repeat(4096) })).toEqual([]);
  });

  it("is in the OpenAPI document as an inference operation without a JSON answer", () => {
    const operation = (buildOpenApiDocument(routes).paths as Record<string, Record<string, { operationId: string; responses: Record<string, { content?: unknown }> }>>)["/audio/speech"]!.post!;
    expect(operation.operationId).toBe("createAudioSpeech");
    expect(operation.responses["200"]!.content).toBeUndefined();
    expect(Object.keys(operation.responses)).toContain("402");
  });
});
