import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";
import { startFakeUpstream, type FakeUpstream, type Received } from "./support/recording-upstream.js";

/** The Gemini adapter's parameters seen where they act: what Gemini received and what the client got. */
let gw: TestGateway;
let up: FakeUpstream;
let key: string;

const token = (t: string, logProbability: number) => ({ token: t, tokenId: 1, logProbability });
const logprobsResult = {
  topCandidates: [{ candidates: [token("Hi", -0.1), token("Hello", -2.5)] }, { candidates: [token("!", -0.2), token(".", -1.9)] }],
  chosenCandidates: [token("Hi", -0.1), token("!", -0.2)],
};

function reply(r: Received) {
  const candidate = { content: { role: "model", parts: [{ text: "Hi!" }] }, finishReason: "STOP", index: 0, ...(r.body.generationConfig ? { logprobsResult } : {}) };
  const answer = { candidates: [candidate], usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 2 }, responseId: "r1" };
  if (r.path.includes("streamGenerateContent")) return { headers: { "content-type": "text/event-stream" }, raw: `data: ${JSON.stringify(answer)}\n\n` };
  return { json: answer };
}

beforeAll(async () => {
  up = await startFakeUpstream();
  up.answer(reply);
  const catalog = {
    providers: [{ slug: "gemini", name: "Gemini", adapter: "google", base_url: `${up.origin}/v1beta`, requires_api_key: false }],
    models: [{ id: "google/g", name: "g", context_length: 100000, endpoints: [{ provider: "gemini", upstream_model: "g", pricing: { prompt: "0.000001", completion: "0.000002" } }] }],
  };
  gw = await startTestGateway(await catalogEnv(catalog));
  key = String((await gw.call("POST", "/keys", { body: { name: "gemini-settings" } })).body.key);
});
afterAll(async () => {
  await gw?.stop();
  await up?.stop();
});

const user = [{ role: "user", content: "Hi" }];
const metadata = { "X-OpenRouter-Metadata": "enabled" };
const chat = (body: Record<string, unknown>) => gw.call("POST", "/chat/completions", { key, body, headers: metadata });
const summaryOf = (body: Record<string, unknown>) => String((body.openrouter_metadata as { summary?: string } | undefined)?.summary);
const expected = {
  content: [
    { token: "Hi", logprob: -0.1, bytes: [72, 105], top_logprobs: [{ token: "Hi", logprob: -0.1, bytes: [72, 105] }, { token: "Hello", logprob: -2.5, bytes: [72, 101, 108, 108, 111] }] },
    { token: "!", logprob: -0.2, bytes: [33], top_logprobs: [{ token: "!", logprob: -0.2, bytes: [33] }, { token: ".", logprob: -1.9, bytes: [46] }] },
  ],
  refusal: null,
};

describe("log probabilities on Gemini", () => {
  it("go as responseLogprobs and logprobs, and come back in OpenAI's shape", async () => {
    const r = await chat({ model: "google/g", messages: user, logprobs: true, top_logprobs: 2 });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(up.last().body.generationConfig).toEqual({ responseLogprobs: true, logprobs: 2 });
    expect((r.body.choices as Array<Record<string, unknown>>)[0]?.logprobs).toEqual(expected);
    expect(summaryOf(r.body)).not.toContain("dropped");
  });

  it("come back streamed on the chunk of their text", async () => {
    const res = await fetch(`${gw.apiUrl}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "google/g", messages: user, logprobs: true, top_logprobs: 2, stream: true }),
    });
    const chunks = (await res.text()).split("\n\n").filter((f) => f.startsWith("data: {")).map((f) => JSON.parse(f.slice(6)) as { choices: Array<Record<string, unknown>> });
    expect(chunks.find((c) => c.choices[0]?.logprobs)?.choices[0]?.logprobs).toEqual(expected);
  });
});

describe("parameters generateContent cannot carry", () => {
  it("are dropped and named in the summary", async () => {
    const tools = [{ type: "function", function: { name: "f", parameters: { type: "object", properties: {} } } }];
    const uncarried = { prediction: { type: "content", content: "Hi" }, logit_bias: { "50256": -100 }, parallel_tool_calls: false, min_p: 0.1, top_a: 0.1, repetition_penalty: 1.1 };
    const r = await chat({ model: "google/g", messages: user, tools, ...uncarried });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    for (const name of Object.keys(uncarried)) expect(summaryOf(r.body), name).toMatch(new RegExp(`dropped: .*\\b${name}\\b`));
    expect(JSON.stringify(up.last().body)).not.toMatch(/prediction|logit|parallel|-100/);
  });
});
