import { createServer } from "node:http";
import { UpstreamError } from "@switchyard/upstream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listenLocal } from "../../../../tests/support/listen.js";
import { openAiSpeech } from "./openai-speech.js";
import type { SpeechCall, SpeechPart, UpstreamTarget } from "./types.js";

/** What the fake answers next: its content type and body, written as the given pieces. */
let answer: { type: string; pieces: string[] | Buffer[] } = { type: "audio/mpeg", pieces: [] };
let received: Record<string, unknown> = {};
let baseUrl: string;
let stop: () => Promise<void>;

const server = createServer(async (req, res) => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  received = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>;
  res.writeHead(200, { "content-type": answer.type });
  for (const piece of answer.pieces) res.write(piece);
  res.end();
});

beforeAll(async () => {
  ({ baseUrl, stop } = await listenLocal(server));
});
afterAll(() => stop());

const target = (): UpstreamTarget => ({ provider: "voices", baseUrl, apiKey: "sk", upstreamModel: "gpt-4o-mini-tts", maxCompletionTokens: null });
const call = (patch: Partial<SpeechCall> = {}): SpeechCall => ({ input: "Hello", format: "pcm", events: false, options: {}, ...patch });

async function collect(parts: AsyncIterable<SpeechPart>): Promise<{ audio: Buffer; usage: unknown }> {
  const audio: Buffer[] = [];
  let usage: unknown;
  for await (const part of parts) {
    if (part.type === "audio") audio.push(Buffer.from(part.bytes));
    else usage = part.usage;
  }
  return { audio: Buffer.concat(audio), usage };
}

const delta = (bytes: Buffer) => `data: ${JSON.stringify({ type: "speech.audio.delta", audio: bytes.toString("base64") })}\r\n\r\n`;

describe("openAiSpeech", () => {
  it("decodes events split anywhere, and takes the usage from the done event", async () => {
    const audio = Buffer.from([0, 1, 2, 250, 251, 252, 253]);
    const text = delta(audio.subarray(0, 3)) + delta(audio.subarray(3)) + `data: ${JSON.stringify({ type: "speech.audio.done", usage: { input_tokens: 4, output_tokens: 9, total_tokens: 13 } })}\r\n\r\n`;
    answer = { type: "text/event-stream", pieces: [text.slice(0, 17), text.slice(17, 60), text.slice(60)] };
    const spoken = await collect(await openAiSpeech.speak(call({ events: true, instructions: "Calm", speed: 0.5 }), target(), AbortSignal.timeout(5000)));
    expect(spoken.audio.equals(audio)).toBe(true);
    expect(spoken.usage).toEqual({ inputTokens: 4, outputTokens: 9 });
    expect(received).toEqual({ model: "gpt-4o-mini-tts", input: "Hello", voice: "alloy", response_format: "pcm", speed: 0.5, instructions: "Calm", stream_format: "sse" });
  });

  it("streams the body of a server that ignores stream_format as it is", async () => {
    answer = { type: "audio/pcm", pieces: [Buffer.from([9, 8]), Buffer.from([7])] };
    const spoken = await collect(await openAiSpeech.speak(call({ events: true, voice: { id: "voice_1" } }), target(), AbortSignal.timeout(5000)));
    expect(spoken).toEqual({ audio: Buffer.from([9, 8, 7]), usage: undefined });
    expect(received.voice).toEqual({ id: "voice_1" });
  });

  it("fails on an error event", async () => {
    answer = { type: "text/event-stream", pieces: [`data: ${JSON.stringify({ type: "error", error: { message: "voice unavailable" } })}\n\n`] };
    await expect(collect(await openAiSpeech.speak(call({ events: true }), target(), AbortSignal.timeout(5000)))).rejects.toThrow(UpstreamError);
  });
});
