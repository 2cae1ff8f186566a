import { createServer } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";
import { listenLocal } from "./support/listen.js";
import { recorded, silentWav } from "./support/media-fixture.js";

/**
 * Audio in a chat prompt is billed by its length (Gemini counts 32 tokens a second), however few bytes the
 * request spends on it. A five-minute clip is 9,600 audio tokens: its hold must cover them, so that the
 * charge is what the provider reports and a key whose limit cannot pay for them is refused before the
 * provider is called.
 */
let gw: TestGateway;
let stopUpstream: () => Promise<void>;
const perSecond = 32;
const textTokens = 20;
const completionTokens = 5;
const prompt = 0.000001;
const completion = 0.000002;
let calls = 0;

/** The seconds of the first WAV clip in a chat body, read as the provider reads it. */
function clipSeconds(body: { messages?: Array<{ content?: unknown }> }): number {
  for (const message of body.messages ?? []) {
    if (!Array.isArray(message.content)) continue;
    for (const part of message.content as Array<{ type?: string; input_audio?: { data: string } }>) {
      if (part.type === "input_audio" && part.input_audio) return (Buffer.from(part.input_audio.data, "base64").length - 44) / 8000;
    }
  }
  return 0;
}

const fiveMinutes = silentWav(300).toString("base64");
const tenSeconds = silentWav(10).toString("base64");
const reportedUsd = (seconds: number) => (seconds * perSecond + textTokens) * prompt + completionTokens * completion;

beforeAll(async () => {
  const upstream = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      calls++;
      const seconds = clipSeconds(JSON.parse(Buffer.concat(chunks).toString("utf8")) as { messages?: Array<{ content?: unknown }> });
      const promptTokens = seconds * perSecond + textTokens;
      const usage = { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
      const answer = { id: "chatcmpl-1", object: "chat.completion", created: 1, model: "listener", choices: [{ index: 0, message: { role: "assistant", content: "Silence." }, finish_reason: "stop" }], usage };
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answer));
    });
  });
  const listening = await listenLocal(upstream);
  stopUpstream = listening.stop;
  const catalog = {
    providers: [{ slug: "alpha", name: "Alpha", adapter: "openai-compatible", base_url: listening.baseUrl, requires_api_key: false }],
    models: [
      {
        id: "audio/listener",
        name: "Listener",
        context_length: 1_000_000,
        input_modalities: ["text", "audio"],
        endpoints: [{ provider: "alpha", upstream_model: "listener", pricing: { prompt: String(prompt), completion: String(completion) } }],
      },
    ],
  };
  gw = await startTestGateway(await catalogEnv(catalog));
});
afterAll(async () => {
  await gw?.stop();
  await stopUpstream?.();
});

const newKey = async (limit?: number) => String((await gw.call("POST", "/keys", { body: { name: "audio", ...(limit === undefined ? {} : { limit }) } })).body.key);
const generation = async (id: string, key: string) => (await recorded(gw, key, id)) as Record<string, number>;
const chatBody = (data: string) => ({ model: "audio/listener", max_tokens: 100, messages: [{ role: "user", content: [{ type: "text", text: "What is said?" }, { type: "input_audio", input_audio: { data, format: "wav" } }] }] });
const responsesBody = (data: string) => ({ model: "audio/listener", max_output_tokens: 100, input: [{ role: "user", content: [{ type: "input_text", text: "What is said?" }, { type: "input_audio", input_audio: { data, format: "wav" } }] }] });

describe("audio in a chat prompt, held by its length", () => {
  it.each([
    ["/chat/completions", chatBody],
    ["/responses", responsesBody],
  ])("charges a five-minute clip on %s what the provider reports for its length", async (path, body) => {
    const key = await newKey();
    const res = await gw.call("POST", path, { key, body: body(fiveMinutes) });
    expect(res.status).toBe(200);
    const record = await generation(res.headers.get("x-generation-id")!, key);
    expect(record.native_tokens_prompt).toBe(300 * perSecond + textTokens);
    expect(record.total_cost).toBeCloseTo(reportedUsd(300), 9);
  });

  it("refuses a key whose limit pays for 2,000 audio tokens but not a five-minute clip's, before the provider is called", async () => {
    // $0.005 covers a 2,000-token prompt and 100 completion tokens ($0.0022), not 9,600 audio tokens.
    const key = await newKey(0.005);
    const before = calls;
    const refused = await gw.call("POST", "/chat/completions", { key, body: chatBody(fiveMinutes) });
    expect(refused.status).toBe(402);
    expect(calls).toBe(before);
    // Ten seconds are 320 tokens: within the limit.
    const served = await gw.call("POST", "/chat/completions", { key, body: chatBody(tenSeconds) });
    expect(served.status).toBe(200);
    const record = await generation(served.headers.get("x-generation-id")!, key);
    expect(record.total_cost).toBeCloseTo(reportedUsd(10), 9);
  });
});
