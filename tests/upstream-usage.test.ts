import { createServer } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { eventually } from "./support/eventually.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";
import { listenLocal } from "./support/listen.js";

/**
 * Usage a provider reports that no request can have (negative counts) is never money: the charge is never
 * below zero nor above the work, the record is written, and the charges after it settle.
 */
type Json = Record<string, unknown>;

/** A fake upstream answering each upstream model with a scripted body: its status, content type and events. */
interface Reply {
  status?: number;
  type?: string;
  /** A JSON body (buffered) or the events of a stream, each sent as `data: <json>` (strings as they are). */
  body?: Json;
  events?: Array<Json | string>;
}

const okStream = (model: string): Array<Json | string> => [
  { id: "good-1", object: "chat.completion.chunk", created: 1, model, choices: [{ index: 0, delta: { role: "assistant", content: `Hello from ${model}` }, finish_reason: null }] },
  { id: "good-1", object: "chat.completion.chunk", created: 1, model, choices: [{ index: 0, delta: {}, finish_reason: "stop" }] },
  { id: "good-1", object: "chat.completion.chunk", created: 1, model, choices: [], usage: { prompt_tokens: 10, completion_tokens: 7, total_tokens: 17 } },
  "[DONE]",
];
const okBody = (model: string): Json => ({
  id: "good-1",
  object: "chat.completion",
  created: 1,
  model,
  choices: [{ index: 0, message: { role: "assistant", content: `Hello from ${model}` }, finish_reason: "stop" }],
  usage: { prompt_tokens: 10, completion_tokens: 7, total_tokens: 17 },
});

/** An answer of OpenAI's chat shape (buffered or streamed) with `usage` as the provider reports it. */
function chatReply(body: Json, usage: Json): Reply {
  const model = String(body.model);
  if (!body.stream) return { body: { ...okBody(model), usage } };
  const events = okStream(model);
  events[2] = { id: "good-1", object: "chat.completion.chunk", created: 1, model, choices: [], usage };
  return { events };
}

/** A long answer, so that its estimate (about four characters a token) is far from one token. */
const longText = "The quick brown fox jumps over the lazy dog. ".repeat(8);

/** Anthropic's stream: the prompt's tokens at its start, the answer, then `ending` (its last events). */
const anthropicStream = (...ending: Json[]): Reply => ({
  events: [
    { type: "message_start", message: { id: "msg_1", type: "message", role: "assistant", content: [], model: "claude", usage: { input_tokens: 25, output_tokens: 1 } } },
    { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
    { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: longText } },
    ...ending,
  ],
});
const anthropicCutAt = (usage: Json): Reply =>
  anthropicStream({ type: "content_block_stop", index: 0 }, { type: "message_delta", delta: { stop_reason: "max_tokens", stop_sequence: null }, usage }, { type: "message_stop" });

const scripts: Record<string, (body: Json) => Reply> = {
  ok: (body) => (body.stream ? { events: okStream(String(body.model)) } : { body: okBody(String(body.model)) }),
  "negative-cache-write": (body) => chatReply(body, { prompt_tokens: 10, completion_tokens: 7, prompt_tokens_details: { cache_write_tokens: -100000 } }),
  "negative-reasoning": (body) => chatReply(body, { prompt_tokens: 10, completion_tokens: 7, completion_tokens_details: { reasoning_tokens: -100000 } }),
  "negative-cached": (body) => chatReply(body, { prompt_tokens: 10, completion_tokens: 7, prompt_tokens_details: { cached_tokens: -100000 } }),
  "anthropic-usage-text": () => anthropicCutAt({ output_tokens: "250" }),
  "anthropic-usage-negative": () => anthropicCutAt({ output_tokens: -250 }),
  "anthropic-fails": () => anthropicStream({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } }),
  "responses-fails": () => ({
    events: [
      { type: "response.created", response: { id: "resp_1", status: "in_progress", output: [] } },
      { type: "response.output_text.delta", item_id: "msg_1", output_index: 0, content_index: 0, delta: longText },
      { type: "response.failed", response: { id: "resp_1", status: "failed", error: { code: "server_error", message: "The model crashed" }, output: [], usage: { input_tokens: 10, output_tokens: 3 } } },
    ],
  }),
};

/** The fake that speaks each script's wire format. */
const badOf = (script: string) => (script.startsWith("anthropic-") ? "bad-anthropic" : script.startsWith("responses-") ? "bad-responses" : "bad");

let gw: TestGateway;
let upstream: { baseUrl: string; stop(): Promise<void> };
const calls: string[] = [];

beforeAll(async () => {
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Json;
    calls.push(String(body.model));
    const reply = scripts[String(body.model)]!(body);
    if (reply.body) return void res.writeHead(reply.status ?? 200, { "content-type": reply.type ?? "application/json" }).end(JSON.stringify(reply.body));
    res.writeHead(reply.status ?? 200, { "content-type": reply.type ?? "text/event-stream" });
    for (const e of reply.events ?? []) res.write(`data: ${typeof e === "string" ? e : JSON.stringify(e)}\n\n`);
    res.end();
  });
  upstream = await listenLocal(server);
  const base = { prompt: "0.000001", completion: "0.000002" };
  const dear = { ...base, input_cache_read: "0.0000001", input_cache_write: "0.00001", internal_reasoning: "0.00001" };
  const catalog = {
    providers: [
      ["bad", "openai-compatible"],
      ["bad-anthropic", "anthropic"],
      ["bad-responses", "openai"],
      ["good", "openai-compatible"],
    ].map(([slug, adapter]) => ({ slug, name: slug, adapter, base_url: upstream.baseUrl, requires_api_key: false })),
    models: Object.keys(scripts).map((script) => ({
      id: `u/${script}`,
      name: script,
      context_length: 8000,
      endpoints: [
        { provider: badOf(script), upstream_model: script, pricing: dear, max_completion_tokens: 1000 },
        { provider: "good", upstream_model: "ok", pricing: base, max_completion_tokens: 1000 },
      ],
    })),
  };
  gw = await startTestGateway({ ...(await catalogEnv(catalog)), UPSTREAM_FIRST_BYTE_TIMEOUT_MS: "1500", UPSTREAM_IDLE_TIMEOUT_MS: "1500" });
});
afterAll(async () => {
  await gw?.stop();
  await upstream?.stop();
});

const messages = [{ role: "user", content: "Say hello" }];
/** The work the good endpoint reports: 10 prompt and 7 completion tokens at its prices. */
const goodCost = 10 * 0.000001 + 7 * 0.000002;

const newKey = async (name: string) => String((await gw.call("POST", "/keys", { body: { name } })).body.key);
const keyUsage = async (key: string) => Number((await gw.call("GET", "/key", { key })).body.data?.usage);
const generation = async (key: string, id: string) => gw.call("GET", `/generation?id=${id}`, { key });

/** A streamed request to `path` (Chat Completions unless said); its generation id and its events' data. */
async function streamed(key: string, model: string, path = "/chat/completions", body: Json = { messages }): Promise<{ id: string; frames: Json[] }> {
  const res = await fetch(`${gw.apiUrl}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model, ...body, stream: true, provider: { order: [badOf(model.slice(2)), "good"] } }),
  });
  const text = await res.text();
  const frames = text
    .split("\n\n")
    .map((f) => f.split("\n").find((line) => line.startsWith("data: "))?.slice(6))
    .filter((data): data is string => data !== undefined && data !== "[DONE]")
    .map((data) => JSON.parse(data) as Json);
  return { id: String(res.headers.get("x-generation-id")), frames };
}

interface Recorded {
  tokens_prompt: number;
  tokens_completion: number;
  finish_reason: string | null;
  native_finish_reason: string | null;
  total_cost: number;
}

async function recorded(key: string, id: string): Promise<Recorded> {
  await eventually(async () => (await generation(key, id)).status === 200, 10_000);
  return (await generation(key, id)).body.data as unknown as Recorded;
}

/** Waits until the key's usage is the sum of `costs`: every charge settled. */
async function settled(key: string, costs: number[]): Promise<void> {
  const sum = costs.reduce((a, b) => a + b, 0);
  await eventually(async () => Math.abs((await keyUsage(key)) - sum) < 1e-12, 10_000);
}

describe("a provider that reports a negative token count", () => {
  it("buffered: the answer that reports it is refused and the next endpoint serves at its own cost", async () => {
    const key = await newKey("negative-buffered");
    const res = await gw.call("POST", "/chat/completions", { key, body: { model: "u/negative-cache-write", messages, provider: { order: ["bad", "good"] } } });
    expect(res.status).toBe(200);
    const usage = res.body.usage as { cost: number };
    expect(usage.cost).toBeCloseTo(goodCost, 12);
    expect(JSON.stringify(res.body.choices)).toContain("Hello from ok");
    const record = await generation(key, String(res.body.id));
    expect(record.status).toBe(200);
    expect(record.body.data).toMatchObject({ provider_name: "good" });
    await settled(key, [usage.cost]);
  });

  it("streamed: the stream that reports it fails in-band, is charged its estimate (never below zero), and later charges still settle", async () => {
    const key = await newKey("negative-streamed");
    const bad = await streamed(key, "u/negative-reasoning");
    const last = bad.frames.at(-1) as { error?: { code: number }; choices?: Array<{ finish_reason: string }> };
    expect(last.error?.code).toBe(502);
    expect(last.choices?.[0]?.finish_reason).toBe("error");
    expect(JSON.stringify(bad.frames)).toContain("Hello from negative-reasoning");
    await eventually(async () => (await generation(key, bad.id)).status === 200, 10_000);
    const record = (await generation(key, bad.id)).body.data as unknown as { total_cost: number; upstream_inference_cost: number; finish_reason: string; tokens_completion: number };
    expect(record.finish_reason).toBe("error");
    expect(record.total_cost).toBeGreaterThan(0);
    expect(record.upstream_inference_cost).toBeGreaterThan(0);
    expect(record.tokens_completion).toBeGreaterThan(0);

    // The requests after it are recorded and settled too: one bad record blocks nobody.
    const after = await gw.call("POST", "/chat/completions", { key, body: { model: "u/ok", messages } });
    expect(after.status).toBe(200);
    await eventually(async () => (await generation(key, String(after.body.id))).status === 200, 10_000);
    await settled(key, [record.total_cost, (after.body.usage as { cost: number }).cost]);
  });

  it("a negative count of cached tokens never raises the charge to the hold", async () => {
    const key = await newKey("negative-cached");
    const res = await gw.call("POST", "/chat/completions", { key, body: { model: "u/negative-cached", messages, provider: { order: ["bad", "good"] } } });
    expect(res.status).toBe(200);
    const usage = res.body.usage as { cost: number };
    expect(usage.cost).toBeCloseTo(goodCost, 12);
    await settled(key, [usage.cost]);
  });
});

describe("an Anthropic stream whose message_delta carries usage that does not parse", () => {
  for (const script of ["anthropic-usage-text", "anthropic-usage-negative"]) {
    it(`keeps its stop reason and estimates the usage (${script})`, async () => {
      const key = await newKey(script);
      const chat = await streamed(key, `u/${script}`);
      const finishes = chat.frames.flatMap((f) => ((f.choices ?? []) as Array<{ finish_reason?: string | null }>).map((c) => c.finish_reason));
      expect(finishes).toContain("length");
      const record = await recorded(key, chat.id);
      expect(record).toMatchObject({ finish_reason: "length", native_finish_reason: "max_tokens", tokens_prompt: 25 });
      // About four characters a token: the answer's length, not the message_start's single token.
      expect(record.tokens_completion).toBe(Math.ceil(longText.length / 4));

      const messagesRes = await streamed(key, `u/${script}`, "/messages", { messages, max_tokens: 1000 });
      const delta = messagesRes.frames.find((f) => f.type === "message_delta") as { delta: { stop_reason: string }; usage: { output_tokens: number } };
      expect(delta.delta.stop_reason).toBe("max_tokens");
      expect(delta.usage.output_tokens).toBe(Math.ceil(longText.length / 4));
    });
  }
});

describe("usage a provider reported before its stream failed", () => {
  it("is recorded as reported (OpenAI Responses, response.failed with usage)", async () => {
    const key = await newKey("responses-fails");
    const res = await streamed(key, "u/responses-fails", "/responses", { input: "Say hello" });
    expect(res.frames.map((f) => f.type)).toContain("response.failed");
    const record = await recorded(key, res.id);
    expect(record).toMatchObject({ tokens_prompt: 10, tokens_completion: 3, finish_reason: "error" });
  });

  it("keeps the prompt's count from message_start and estimates the rest (Anthropic, then an error)", async () => {
    const key = await newKey("anthropic-fails");
    const res = await streamed(key, "u/anthropic-fails", "/messages", { messages, max_tokens: 1000 });
    const start = res.frames.find((f) => f.type === "message_start") as { message: { usage: { input_tokens: number } } };
    expect(start.message.usage.input_tokens).toBe(25);
    const record = await recorded(key, res.id);
    expect(record).toMatchObject({ tokens_prompt: 25, finish_reason: "error" });
    expect(record.tokens_completion).toBe(Math.ceil(longText.length / 4));
    expect(record.total_cost).toBeGreaterThan(0);
  });
});
