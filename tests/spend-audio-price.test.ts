import { createServer, type ServerResponse } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";
import { listenLocal } from "./support/listen.js";
import { recorded, silentWav } from "./support/media-fixture.js";

/**
 * Audio tokens are billed at the endpoint's `audio` price (per audio input token) and `audio_output` price
 * (per audio output token) when it lists them, as the provider reports them: OpenAI-style
 * `prompt_tokens_details.audio_tokens` and `completion_tokens_details.audio_tokens`, Gemini's
 * `promptTokensDetails` entries of modality AUDIO. The hold prices the clip's audio tokens at the dearer of
 * `prompt` and `audio`.
 */
let gw: TestGateway;
let stopUpstream: () => Promise<void>;
let calls = 0;
const textTokens = 20;
const audioTokens = 320;
const completionTokens = 5;
const audioOutTokens = 40;
const prices = { prompt: 0.000001, audio: 0.000005, completion: 0.000002, audio_output: 0.000008 };
const expectedUsd = textTokens * prices.prompt + audioTokens * prices.audio + completionTokens * prices.completion;
const expectedSpokenUsd = (textTokens + audioTokens) * prices.prompt + completionTokens * prices.completion + audioOutTokens * prices.audio_output;

const tenSeconds = silentWav(10).toString("base64");

const sse = (res: ServerResponse, events: unknown[]) => {
  res.writeHead(200, { "content-type": "text/event-stream" });
  for (const e of events) res.write(`data: ${JSON.stringify(e)}\n\n`);
  res.end("data: [DONE]\n\n");
};

/** OpenAI's chat answer; the model `speaker` answers in audio too, and counts its audio output tokens. */
function openAiAnswer(res: ServerResponse, body: { model: string; stream?: boolean }) {
  const spoken = body.model === "speaker";
  const completion = spoken ? completionTokens + audioOutTokens : completionTokens;
  const usage = {
    prompt_tokens: textTokens + audioTokens,
    completion_tokens: completion,
    total_tokens: textTokens + audioTokens + completion,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: spoken ? 0 : audioTokens },
    completion_tokens_details: { reasoning_tokens: 0, audio_tokens: spoken ? audioOutTokens : 0 },
  };
  const base = { id: "chatcmpl-1", created: 1, model: body.model };
  if (!body.stream) {
    const answer = { ...base, object: "chat.completion", choices: [{ index: 0, message: { role: "assistant", content: "Silence." }, finish_reason: "stop" }], usage };
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answer));
    return;
  }
  const chunk = { ...base, object: "chat.completion.chunk" };
  sse(res, [
    { ...chunk, choices: [{ index: 0, delta: { role: "assistant", content: "Silence." }, finish_reason: null }] },
    { ...chunk, choices: [{ index: 0, delta: {}, finish_reason: "stop" }] },
    { ...chunk, choices: [], usage },
  ]);
}

/** Gemini's answer, its prompt's tokens told apart by modality. */
function geminiAnswer(res: ServerResponse, stream: boolean) {
  const usageMetadata = {
    promptTokenCount: textTokens + audioTokens,
    candidatesTokenCount: completionTokens,
    totalTokenCount: textTokens + audioTokens + completionTokens,
    promptTokensDetails: [
      { modality: "TEXT", tokenCount: textTokens },
      { modality: "AUDIO", tokenCount: audioTokens },
    ],
  };
  const answer = { candidates: [{ index: 0, content: { role: "model", parts: [{ text: "Silence." }] }, finishReason: "STOP" }], usageMetadata, responseId: "gemini-1" };
  if (stream) sse(res, [answer]);
  else res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answer));
}

beforeAll(async () => {
  const upstream = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      calls++;
      const path = req.url ?? "";
      if (path.includes(":generateContent")) return geminiAnswer(res, false);
      if (path.includes(":streamGenerateContent")) return geminiAnswer(res, true);
      openAiAnswer(res, JSON.parse(Buffer.concat(chunks).toString("utf8")) as { model: string; stream?: boolean });
    });
  });
  const listening = await listenLocal(upstream);
  stopUpstream = listening.stop;
  const pricing = Object.fromEntries(Object.entries(prices).map(([k, v]) => [k, v.toFixed(9)]));
  const model = (id: string, provider: string) => ({ id: `audio/${id}`, name: id, context_length: 1_000_000, input_modalities: ["text", "audio"], endpoints: [{ provider, upstream_model: id, pricing }] });
  const catalog = {
    providers: [
      { slug: "alpha", name: "Alpha", adapter: "openai-compatible", base_url: listening.baseUrl, requires_api_key: false },
      { slug: "gemini", name: "Gemini", adapter: "google", base_url: listening.baseUrl, api_key_env: "GEMINI_KEY" },
    ],
    models: [model("listener", "alpha"), model("speaker", "alpha"), model("gemini", "gemini")],
  };
  gw = await startTestGateway({ ...(await catalogEnv(catalog)), GEMINI_KEY: "gemini-secret" });
});
afterAll(async () => {
  await gw?.stop();
  await stopUpstream?.();
});

const newKey = async (limit?: number) => String((await gw.call("POST", "/keys", { body: { name: "audio-price", ...(limit === undefined ? {} : { limit }) } })).body.key);
const generation = async (id: string, key: string) => (await recorded(gw, key, id)) as Record<string, number>;
const chatBody = (model: string, stream: boolean) => ({
  model: `audio/${model}`,
  max_tokens: 100,
  stream,
  messages: [{ role: "user", content: [{ type: "text", text: "What is said?" }, { type: "input_audio", input_audio: { data: tenSeconds, format: "wav" } }] }],
});

describe("audio tokens at the endpoint's audio prices", () => {
  it.each([
    ["an OpenAI-style provider, buffered", "listener", false],
    ["an OpenAI-style provider, streamed", "listener", true],
    ["Gemini, buffered", "gemini", false],
    ["Gemini, streamed", "gemini", true],
  ])("charges prompt audio tokens at `audio` from %s", async (_, model, stream) => {
    const key = await newKey();
    const res = await fetch(`${gw.apiUrl}/chat/completions`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(chatBody(model, stream)) });
    expect(res.status).toBe(200);
    const answer = await res.text();
    const record = await generation(res.headers.get("x-generation-id")!, key);
    expect(record.native_tokens_prompt).toBe(textTokens + audioTokens);
    expect(record.total_cost).toBeCloseTo(expectedUsd, 12);
    expect(answer).toContain(`"audio_tokens":${audioTokens}`);
  });

  it("charges audio output tokens at `audio_output` when the chat answer is spoken", async () => {
    const key = await newKey();
    const body = { ...chatBody("speaker", false), modalities: ["text", "audio"], audio: { voice: "alloy", format: "wav" } };
    const res = await gw.call("POST", "/chat/completions", { key, body });
    expect(res.status).toBe(200);
    const record = await generation(res.headers.get("x-generation-id")!, key);
    expect(record.total_cost).toBeCloseTo(expectedSpokenUsd, 12);
  });

  it("holds the clip's audio tokens at the audio price, refusing a key that pays for them only at the prompt price", async () => {
    // Ten seconds are held at 320 audio tokens: $0.0016 at `audio`, $0.00032 at `prompt`; with the text and
    // 100 completion tokens, about $0.0020 against about $0.0007.
    const key = await newKey(0.0012);
    const before = calls;
    const refused = await gw.call("POST", "/chat/completions", { key, body: chatBody("listener", false) });
    expect(refused.status).toBe(402);
    expect(calls).toBe(before);
  });
});
