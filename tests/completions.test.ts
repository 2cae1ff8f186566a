import { join } from "node:path";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { eventually } from "./support/eventually.js";
import { startFakeProvider, type FakeProvider } from "./support/fake-provider.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";
import { startReplayProvider, type ReplayProvider } from "./support/replay-provider.js";

/**
 * `POST /completions`, the legacy text completions, through the whole gateway with the openai client:
 * OpenAI-compatible endpoints get their own `/completions` route with the prompt as given; an Anthropic
 * endpoint gets the prompt as one user message, and the gateway echoes the prompt for it.
 */
let gw: TestGateway;
let alpha: FakeProvider;
let beta: FakeProvider;
let claude: ReplayProvider;
let gemini: ReplayProvider;
let key: string;
let openai: OpenAI;

const cheap = { prompt: "0.000001", completion: "0.000002" };
const dear = { prompt: "0.000002", completion: "0.000004" };
const claudePricing = { prompt: "0.000003", completion: "0.000015", input_cache_read: "0.0000003", input_cache_write: "0.00000375" };
const supported = ["max_tokens", "temperature", "stop", "seed"];
const model = (id: string, endpoints: Array<[string, string, Record<string, string>]>) => ({
  id,
  name: id,
  context_length: 8000,
  endpoints: endpoints.map(([provider, upstream, pricing]) => ({ provider, upstream_model: upstream, pricing, max_completion_tokens: 1000, supported_parameters: supported })),
});

beforeAll(async () => {
  alpha = await startFakeProvider("alpha");
  beta = await startFakeProvider("beta");
  claude = await startReplayProvider(join(import.meta.dirname, "fixtures/anthropic"), (req) => ({ file: req.body.stream ? "stream.sse" : "message.json" }));
  gemini = await startReplayProvider(join(import.meta.dirname, "fixtures/google"), (req) => ({ file: req.path.includes(":streamGenerateContent") ? "stream.sse" : "generate.json" }));
  const catalog = {
    providers: [
      { slug: "alpha", name: "Alpha", adapter: "openai-compatible", base_url: alpha.baseUrl, api_key_env: "ALPHA_KEY" },
      { slug: "beta", name: "Beta", adapter: "openai-compatible", base_url: beta.baseUrl, requires_api_key: false },
      { slug: "claude", name: "Claude", adapter: "anthropic", base_url: claude.baseUrl, api_key_env: "CLAUDE_KEY" },
      { slug: "gemini", name: "Gemini", adapter: "google", base_url: gemini.baseUrl, api_key_env: "GEMINI_KEY" },
    ],
    models: [
      model("text/ok", [["alpha", "ok", cheap]]),
      model("text/fallback", [["alpha", "fail-500", cheap], ["beta", "ok", dear]]),
      model("text/reset", [["alpha", "reset", cheap], ["beta", "ok", dear]]),
      model("text/cut", [["alpha", "cut", cheap]]),
      model("text/per-token", [["alpha", "ok", { prompt: "0", completion: "0.00001" }]]),
      model("text/claude", [["claude", "text", claudePricing]]),
      model("text/gemini", [["gemini", "gemini-2.5-flash", cheap]]),
      model("text/mixed", [["claude", "text", claudePricing], ["alpha", "ok", cheap]]),
    ],
  };
  gw = await startTestGateway({ ...(await catalogEnv(catalog)), CLAUDE_KEY: "claude-secret", GEMINI_KEY: "gemini-secret" });
  key = String((await gw.call("POST", "/keys", { body: { name: "completions" } })).body.key);
  openai = new OpenAI({ apiKey: key, baseURL: gw.apiUrl, maxRetries: 0 });
});
afterAll(async () => {
  await gw?.stop();
  await alpha?.stop();
  await beta?.stop();
  await claude?.stop();
  await gemini?.stop();
});

type PricedUsage = { prompt_tokens: number; completion_tokens: number; total_tokens: number; cost: number };
const priced = (usage: unknown) => usage as PricedUsage;
/** 12 prompt tokens × $0.000001 + 5 completion tokens × $0.000002, what the fake reports at `cheap` prices. */
const cheapCost = 12 * 0.000001 + 5 * 0.000002;

/** The stored generation, once its record is committed. */
async function generation(id: string, as = key): Promise<Record<string, unknown>> {
  await eventually(async () => (await gw.call("GET", `/generation?id=${id}`, { key: as })).status === 200, 5000);
  return (await gw.call("GET", `/generation?id=${id}`, { key: as })).body.data as Record<string, unknown>;
}

/** A raw streamed request: status, generation id and the `data:` frames as sent. */
async function rawStream(body: Record<string, unknown>) {
  const res = await fetch(`${gw.apiUrl}/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ ...body, stream: true }),
  });
  const frames = (await res.text())
    .split("\n\n")
    .filter((f) => f.startsWith("data: "))
    .map((f) => f.slice(6));
  return { status: res.status, id: res.headers.get("x-generation-id"), frames };
}

/** Reads an openai-client stream whole: its text, chunks and final usage. */
async function drain(stream: AsyncIterable<OpenAI.Completion>) {
  const chunks: OpenAI.Completion[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  const text = chunks.map((c) => c.choices[0]?.text ?? "").join("");
  return { chunks, text, usage: priced(chunks.find((c) => c.usage)?.usage) };
}

const lastAlpha = () => alpha.requests.at(-1)!;

describe("POST /completions on an OpenAI-compatible endpoint", () => {
  it("answers a buffered completion with priced usage, the generation id and a stored generation", async () => {
    const { data, response } = await openai.completions.create({ model: "text/ok", prompt: "Once upon a time" }).withResponse();
    expect(data).toMatchObject({ object: "text_completion", model: "text/ok", choices: [{ index: 0, text: "Hello from alpha", finish_reason: "stop" }] });
    expect(response.headers.get("x-generation-id")).toBe(data.id);
    const usage = priced(data.usage);
    expect(usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 });
    expect(usage.cost).toBeCloseTo(cheapCost, 12);
    const stored = await generation(data.id);
    expect(stored).toMatchObject({ model: "text/ok", provider_name: "alpha", tokens_prompt: 12, tokens_completion: 5, streamed: false, finish_reason: "stop" });
    expect(stored.total_cost).toBeCloseTo(cheapCost, 12);
  });

  it("sends the legacy route the prompt as given with its own fields, the end user hashed, and relays logprobs", async () => {
    const prompt = "def add(a, b):\n";
    const answer = await openai.completions.create({
      model: "text/ok",
      prompt,
      suffix: "\n# end",
      echo: true,
      logprobs: 2,
      max_tokens: 50,
      stop: ["\n\n"],
      temperature: 0.3,
      seed: 7,
      user: "end-user-7",
    });
    const upstream = lastAlpha();
    expect(upstream.path).toBe("/v1/completions");
    expect(upstream.authorization).toBe("Bearer alpha-secret");
    expect(upstream.body).toMatchObject({ model: "ok", prompt, suffix: "\n# end", echo: true, logprobs: 2, max_tokens: 50, stop: ["\n\n"], temperature: 0.3, seed: 7, stream: false });
    expect(upstream.body).not.toHaveProperty("messages");
    expect(upstream.body.user).toMatch(/^[0-9a-f]{32}$/);
    expect(JSON.stringify(upstream.body)).not.toContain("end-user-7");
    // The legacy route echoes by itself: the prompt appears once.
    expect(answer.choices[0]?.text).toBe(`${prompt}Hello from alpha`);
    expect(answer.choices[0]?.logprobs).toMatchObject({ tokens: [`${prompt}Hello from alpha`], token_logprobs: [-0.25], text_offset: [0] });
  });

  it("takes a prompt given as an array of one string", async () => {
    const answer = await openai.completions.create({ model: "text/ok", prompt: ["Just one"] });
    expect(answer.choices[0]?.text).toBe("Hello from alpha");
    expect(lastAlpha().body.prompt).toBe("Just one");
  });

  it("streams text_completion frames ending in priced usage, and records a streamed generation", async () => {
    const { data: stream, response } = await openai.completions
      .create({ model: "text/ok", prompt: "Once upon a time", stream: true, max_tokens: 20, stop: "END", user: "end-user-8" })
      .withResponse();
    const id = response.headers.get("x-generation-id");
    const { chunks, text, usage } = await drain(stream);
    expect(text).toBe("Hello from alpha");
    for (const chunk of chunks) expect(chunk).toMatchObject({ id, object: "text_completion", model: "text/ok" });
    expect(chunks.flatMap((c) => c.choices.map((choice) => choice.finish_reason)).filter(Boolean)).toEqual(["stop"]);
    expect(chunks.at(-1)?.choices).toEqual([]);
    expect(usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 5 });
    expect(usage.cost).toBeCloseTo(cheapCost, 12);
    const upstream = lastAlpha();
    expect(upstream.path).toBe("/v1/completions");
    expect(upstream.body).toMatchObject({ model: "ok", prompt: "Once upon a time", stream: true, stream_options: { include_usage: true }, max_tokens: 20, stop: "END" });
    expect(upstream.body.user).toMatch(/^[0-9a-f]{32}$/);
    const stored = await generation(id!);
    expect(stored).toMatchObject({ model: "text/ok", tokens_prompt: 12, tokens_completion: 5, streamed: true, finish_reason: "stop" });
    expect(stored.total_cost).toBeCloseTo(cheapCost, 12);
  });

  it("streams the legacy route's own echo and logprobs once", async () => {
    const { text, chunks } = await drain(await openai.completions.create({ model: "text/ok", prompt: "Say: ", echo: true, logprobs: 1, stream: true }));
    expect(text).toBe("Say: Hello from alpha");
    expect(lastAlpha().body).toMatchObject({ echo: true, logprobs: 1, stream: true });
    const tokens = chunks.flatMap((c) => c.choices.flatMap((choice) => choice.logprobs?.tokens ?? []));
    expect(tokens).toEqual(["Say: Hello ", "from alpha"]);
  });

  it("charges a buffered and a streamed run of the same completion the same", async () => {
    const body = { model: "text/ok", prompt: "Parity", max_tokens: 30 };
    const buffered = await openai.completions.create(body);
    const { data: stream, response } = await openai.completions.create({ ...body, stream: true }).withResponse();
    await drain(stream);
    const costs = await Promise.all([buffered.id, response.headers.get("x-generation-id")!].map(async (id) => Number((await generation(id)).total_cost)));
    expect(costs[0]).toBeCloseTo(cheapCost, 12);
    expect(costs[1]).toBe(costs[0]);
  });
});

describe("POST /completions on a chat-only endpoint", () => {
  it("sends the prompt as one user message and answers in the legacy shape", async () => {
    const { data, response } = await openai.completions.create({ model: "text/claude", prompt: "Greet me", temperature: 0.5, stop: "END", max_tokens: 64 }).withResponse();
    const upstream = claude.requests.at(-1)!;
    expect(upstream.path).toBe("/v1/messages");
    expect(upstream.body).toMatchObject({ model: "text", max_tokens: 64, temperature: 0.5, stop_sequences: ["END"], stream: false });
    const sent = upstream.body.messages as Array<{ role: string; content: unknown }>;
    expect(sent).toHaveLength(1);
    expect(sent[0]?.role).toBe("user");
    expect(JSON.stringify(sent[0]?.content)).toContain("Greet me");
    expect(upstream.body).not.toHaveProperty("prompt");
    expect(data).toMatchObject({ object: "text_completion", model: "text/claude", choices: [{ text: "Hello! How can I help you today?", finish_reason: "stop" }] });
    expect(response.headers.get("x-generation-id")).toBe(data.id);
    // 12 uncached + 1000 read from the cache + 100 written to it, and 10 completion tokens
    const cost = 12 * 0.000003 + 1000 * 0.0000003 + 100 * 0.00000375 + 10 * 0.000015;
    expect(priced(data.usage).cost).toBeCloseTo(cost, 12);
    expect((await generation(data.id)).total_cost).toBeCloseTo(cost, 12);
  });

  it("sends the prompt to Gemini as one user turn, buffered and streamed, and answers with its text only", async () => {
    const buffered = await openai.completions.create({ model: "text/gemini", prompt: "Greet me", max_tokens: 64 });
    expect(buffered.choices[0]).toMatchObject({ text: "Hello! How can I help you today?", finish_reason: "stop" });
    // 1210 prompt tokens, and 9 answer + 42 thinking tokens as completion
    expect(priced(buffered.usage)).toMatchObject({ prompt_tokens: 1210, completion_tokens: 51 });
    const upstream = gemini.requests.at(-1)!;
    expect(upstream.path).toMatch(/\/models\/gemini-2\.5-flash:generateContent$/);
    expect(upstream.body.contents).toEqual([{ role: "user", parts: [{ text: "Greet me" }] }]);
    const { text, usage } = await drain(await openai.completions.create({ model: "text/gemini", prompt: "Greet me", stream: true }));
    expect(gemini.requests.at(-1)!.path).toMatch(/:streamGenerateContent/);
    expect(text).toMatch(/^Hello/);
    expect(text).not.toContain("Choosing a greeting");
    expect(usage.prompt_tokens).toBe(8);
  });

  it("prepends the prompt itself for echo, buffered and streamed, and never sends echo upstream", async () => {
    const buffered = await openai.completions.create({ model: "text/claude", prompt: "Q: hi\nA: ", echo: true });
    expect(buffered.choices[0]?.text).toBe("Q: hi\nA: Hello! How can I help you today?");
    expect(claude.requests.at(-1)!.body).not.toHaveProperty("echo");
    const { text, chunks, usage } = await drain(await openai.completions.create({ model: "text/claude", prompt: "Q: hi\nA: ", echo: true, stream: true }));
    expect(text).toBe("Q: hi\nA: Hello from Claude");
    expect(chunks[0]?.choices[0]?.text).toBe("Q: hi\nA: ");
    expect(claude.requests.at(-1)!.body).toMatchObject({ stream: true });
    expect(usage.cost).toBeCloseTo(25 * 0.000003 + 15 * 0.000015, 12);
  });

  it("refuses suffix and logprobs with 400 naming the field when only a chat-only endpoint serves the model", async () => {
    const before = claude.requests.length;
    for (const [field, extra] of [
      ["suffix", { suffix: "}" }],
      ["logprobs", { logprobs: 2 }],
    ] as const) {
      const error = await openai.completions.create({ model: "text/claude", prompt: "x", ...extra }).catch((e: unknown) => e);
      expect(error, field).toBeInstanceOf(OpenAI.APIError);
      expect((error as InstanceType<typeof OpenAI.APIError>).status, field).toBe(400);
      expect((error as Error).message, field).toContain(field);
    }
    expect(claude.requests.length).toBe(before);
  });

  it("sends suffix and logprobs to the legacy endpoint of a model that also has a chat-only one", async () => {
    const claudeFirst = { order: ["claude", "alpha"] };
    const plain = await gw.call("POST", "/completions", { key, body: { model: "text/mixed", prompt: "fn(", provider: claudeFirst } });
    expect(plain.status).toBe(200);
    expect((plain.body.choices as Array<{ text: string }>)[0]?.text).toBe("Hello! How can I help you today?");
    const beforeClaude = claude.requests.length;
    for (const extra of [{ suffix: ")" }, { logprobs: 1 }]) {
      const res = await gw.call("POST", "/completions", { key, body: { model: "text/mixed", prompt: "fn(", provider: claudeFirst, ...extra } });
      expect(res.status, JSON.stringify(extra)).toBe(200);
      expect((res.body.choices as Array<{ text: string }>)[0]?.text).toBe("Hello from alpha");
      expect(lastAlpha()).toMatchObject({ path: "/v1/completions", body: { model: "ok", prompt: "fn(", ...extra } });
    }
    expect(claude.requests.length).toBe(beforeClaude);
  });
});

describe("spend, guardrails and validation", () => {
  it("answers 402 when the key's limit cannot pay for the request's worst case", async () => {
    const created = await gw.call("POST", "/keys", { body: { name: "limited", limit: 0.001 } });
    expect(created.status).toBe(201);
    const limited = String(created.body.key);
    const before = alpha.requests.length;
    const refused = await gw.call("POST", "/completions", { key: limited, body: { model: "text/per-token", prompt: "Write", max_tokens: 1000 } });
    expect(refused.status).toBe(402);
    // $0.001 at $0.00001 per completion token (the prompt is free): 100 tokens.
    expect(refused.body.error?.message).toContain("You requested up to 1000 tokens, but can only afford 100.");
    expect(alpha.requests.length).toBe(before);
    const afforded = await gw.call("POST", "/completions", { key: limited, body: { model: "text/per-token", prompt: "Write", max_tokens: 100 } });
    expect(afforded.status).toBe(200);
  });

  it("applies the key's guardrail content filters to the prompt the legacy route receives", async () => {
    const created = await gw.call("POST", "/keys", { body: { name: "filtered" } });
    const filtered = String(created.body.key);
    const guardrail = await gw.call("POST", "/guardrails", { body: { name: "no emails", content_filter_builtins: [{ slug: "email", action: "redact" }] } });
    expect(guardrail.status).toBe(201);
    const assigned = await gw.call("POST", `/guardrails/${String(guardrail.body.data?.id)}/assignments/keys`, { body: { key_hashes: [String(created.body.data?.hash)] } });
    expect(assigned.status).toBe(200);
    const client = new OpenAI({ apiKey: filtered, baseURL: gw.apiUrl, maxRetries: 0 });
    const answer = await client.completions.create({ model: "text/ok", prompt: "mail ada.lovelace@example.org now" });
    expect(lastAlpha()).toMatchObject({ path: "/v1/completions", body: { prompt: "mail [EMAIL] now" } });
    expect((await generation(answer.id, filtered)).content_filters).toEqual([expect.objectContaining({ filter: "email", action: "redact", count: 1 })]);
    await drain(await client.completions.create({ model: "text/ok", prompt: "to ada.lovelace@example.org", stream: true }));
    expect(lastAlpha().body).toMatchObject({ prompt: "to [EMAIL]", stream: true });
  });

  it("rejects unknown fields, n and best_of beyond 1, several prompts, token ids and management keys", async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ model: "text/ok", prompt: "x", frobnicate: true }, /frobnicate/],
      [{ model: "text/ok", prompt: "x", n: 2 }, /\bn\b/],
      [{ model: "text/ok", prompt: "x", best_of: 3 }, /best_of/],
      [{ model: "text/ok", prompt: ["one", "two"] }, /prompt/],
      [{ model: "text/ok", prompt: [1, 2, 3] }, /prompt/],
      [{ model: "text/ok" }, /prompt/],
    ];
    const before = alpha.requests.length;
    for (const [body, message] of cases) {
      const res = await gw.call("POST", "/completions", { key, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error?.message, JSON.stringify(body)).toMatch(message);
    }
    const management = await gw.call("POST", "/completions", { body: { model: "text/ok", prompt: "x" } });
    expect(management.status).toBe(403);
    expect(alpha.requests.length).toBe(before);
  });
});

describe("faults", () => {
  it("falls back to the next endpoint when one fails before its first byte, buffered and streamed", async () => {
    const sortByPrice = { sort: "price" };
    const buffered = await gw.call("POST", "/completions", { key, body: { model: "text/fallback", prompt: "Hi", provider: sortByPrice }, headers: { "x-openrouter-metadata": "enabled" } });
    expect(buffered.status).toBe(200);
    expect((buffered.body.choices as Array<{ text: string }>)[0]?.text).toBe("Hello from beta");
    expect(buffered.body.openrouter_metadata).toMatchObject({ attempt: 2 });
    expect(alpha.requests.some((r) => r.body.model === "fail-500" && r.path === "/v1/completions")).toBe(true);
    expect(beta.requests.at(-1)).toMatchObject({ path: "/v1/completions", body: { model: "ok", prompt: "Hi" } });
    const streamed = await openai.completions.create({ model: "text/reset", prompt: "Hi", stream: true, provider: sortByPrice } as OpenAI.CompletionCreateParamsStreaming, {
      headers: { "x-openrouter-metadata": "enabled" },
    });
    const { text, chunks } = await drain(streamed);
    expect(text).toBe("Hello from beta");
    expect(alpha.requests.some((r) => r.body.model === "reset")).toBe(true);
    // The usage frame carries the routing metadata, as the buffered answer does.
    expect((chunks.at(-1) as unknown as { openrouter_metadata?: unknown }).openrouter_metadata).toMatchObject({ attempt: 2, requested: "text/reset" });
  });

  it("ends a stream cut mid-way with an in-band error frame, and records the spend", async () => {
    const { status, id, frames } = await rawStream({ model: "text/cut", prompt: "Hi" });
    expect(status).toBe(200);
    expect(frames).not.toContain("[DONE]");
    const sent = frames.map((f) => JSON.parse(f) as { object: string; choices: Array<{ text: string; finish_reason: string | null }>; error?: { code: number } });
    expect(sent.map((f) => f.object)).toEqual(sent.map(() => "text_completion"));
    expect(sent.flatMap((f) => f.choices.map((c) => c.text)).join("")).toBe("Hello from alpha");
    const last = sent.at(-1)!;
    expect(last.error?.code).toBe(502);
    expect(last.choices[0]?.finish_reason).toBe("error");
    const stored = await generation(id!);
    expect(stored).toMatchObject({ finish_reason: "error", streamed: true });
    expect(stored.total_cost as number).toBeGreaterThan(0);
    // The openai client reads the error frame as an error of the stream.
    const error = await drain(await openai.completions.create({ model: "text/cut", prompt: "Hi", stream: true })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as Error).message).toContain("Provider returned error mid-stream");
  });
});
