import Anthropic from "@anthropic-ai/sdk";
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { eventually } from "./support/eventually.js";
import { cachedPrefixTokens, fakeUsage, startFakeAnthropic, type FakeAnthropic } from "./support/fake-anthropic.js";
import { startFakeProvider, type FakeProvider } from "./support/fake-provider.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";

/**
 * What Messages requests cost: prompt-cache reads and writes priced from the catalog and shown in `usage`
 * and on the generation record, the same charge buffered and streamed, streams cut short while the model
 * thought or called a tool, spend limits under concurrency, and cache markers of the other dialects reaching Anthropic.
 */
type Json = Record<string, unknown>;

let gw: TestGateway;
let claude: FakeAnthropic;
let open: FakeProvider;

/** Per-token prices in picodollars, as the catalog below states them in USD. */
const pico = { prompt: 3_000_000n, completion: 15_000_000n, cacheRead: 300_000n, cacheWrite: 3_750_000n };
const cachePricing = { prompt: "0.000003", completion: "0.000015", input_cache_read: "0.0000003", input_cache_write: "0.00000375" };
/** OpenAI-style automatic caching: a tenth of the prompt price for cached tokens. */
const autoPricing = { prompt: "0.000001", completion: "0.000002", input_cache_read: "0.0000001" };
const usd = (p: bigint) => Number(p) / 1e12;
/** The fake's 12 uncached input tokens and 9 output tokens, and its 2048 cached-prefix tokens at the write or the read price. */
const cachePico = (price: bigint) => BigInt(fakeUsage.input) * pico.prompt + BigInt(cachedPrefixTokens) * price + BigInt(fakeUsage.output) * pico.completion;
const cacheWriteCost = usd(cachePico(pico.cacheWrite));
const cacheReadCost = usd(cachePico(pico.cacheRead));

const model = (id: string, provider: string, upstream: string, pricing: Json) => ({
  id,
  name: id,
  context_length: 200000,
  endpoints: [{ provider, upstream_model: upstream, pricing, max_completion_tokens: 8192 }],
});

beforeAll(async () => {
  claude = await startFakeAnthropic();
  open = await startFakeProvider("open", () => "ok");
  const catalog = {
    providers: [
      { slug: "claude", name: "Claude", adapter: "anthropic", base_url: claude.baseUrl, api_key_env: "CLAUDE_KEY" },
      { slug: "open", name: "Open", adapter: "openai-compatible", base_url: open.baseUrl, requires_api_key: false },
    ],
    models: [
      model("anthropic/cache", "claude", "text", cachePricing),
      model("anthropic/cache-1h", "claude", "text", { ...cachePricing, input_cache_write_1h: "0.000006" }),
      // A flat price per request: the worst case held is exactly the charge.
      model("anthropic/cent", "claude", "text", { prompt: "0", completion: "0", request: "0.01" }),
      model("vendor/auto-cache", "open", "ok", autoPricing),
      // Streams the fake ends with an error event after a thinking block's first words, or a tool call's first arguments.
      model("anthropic/thinking-cut", "claude", "thinking-mid-error", cachePricing),
      model("anthropic/tools-cut", "claude", "tools-mid-error", cachePricing),
      // Ends its stream after message_delta, without message_stop.
      model("anthropic/delta-cut", "claude", "delta-then-cut", cachePricing),
    ],
  };
  gw = await startTestGateway({ ...(await catalogEnv(catalog)), CLAUDE_KEY: "claude-secret" });
});
afterAll(async () => {
  await gw?.stop();
  await claude?.stop();
  await open?.stop();
});

async function newKey(settings: Json = {}) {
  const created = await gw.call("POST", "/keys", { body: { name: "messages-money", ...settings } });
  expect(created.status).toBe(201);
  const key = String(created.body.key);
  return { key, hash: String(created.body.data?.hash), client: new Anthropic({ apiKey: key, baseURL: `${gw.baseUrl}/api`, maxRetries: 0 }) };
}

/** The stored generation, once its record is committed. */
async function generation(id: string, key: string): Promise<Json> {
  await eventually(async () => (await gw.call("GET", `/generation?id=${id}`, { key })).status === 200, 5000);
  return (await gw.call("GET", `/generation?id=${id}`, { key })).body.data as Json;
}

const keyUsage = async (hash: string) => Number((await gw.call("GET", `/keys/${hash}`)).body.data?.usage ?? 0);

/**
 * A system prompt of about 2,000 tokens marked for the cache, unique to the caller so that its first use
 * writes the cache; long enough that the worst case held covers the cached tokens the fake reports.
 */
function cachedSystem(): Anthropic.TextBlockParam[] {
  const text = `Case ${randomUUID()}. ${"Answer from the shared reference manual only. ".repeat(190)}`;
  return [{ type: "text", text, cache_control: { type: "ephemeral", ttl: "1h" } }];
}

const written = {
  input_tokens: fakeUsage.input,
  output_tokens: fakeUsage.output,
  cache_creation_input_tokens: cachedPrefixTokens,
  cache_read_input_tokens: 0,
  // `cachedSystem` marks its prefix for an hour.
  cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: cachedPrefixTokens },
};
const read = {
  input_tokens: fakeUsage.input,
  output_tokens: fakeUsage.output,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: cachedPrefixTokens,
  cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
};

describe("prompt caching on an Anthropic endpoint", () => {
  it("prices a cache write at input_cache_write, then the same request's cache read at input_cache_read", async () => {
    const { key, hash, client } = await newKey();
    const system = cachedSystem();
    const params = { model: "anthropic/cache", max_tokens: 1000, system, messages: [{ role: "user" as const, content: "Summarize the manual." }] };

    const first = await client.messages.create(params);
    expect(claude.requests.at(-1)!.raw).toContain(JSON.stringify(system));
    expect(first.usage).toEqual(written);
    expect(await generation(first.id, key)).toMatchObject({
      tokens_prompt: fakeUsage.input + cachedPrefixTokens,
      tokens_completion: fakeUsage.output,
      native_tokens_cached: 0,
      total_cost: cacheWriteCost,
      usage: cacheWriteCost,
    });

    const second = await client.messages.create(params);
    expect(second.usage).toEqual(read);
    expect(await generation(second.id, key)).toMatchObject({
      tokens_prompt: fakeUsage.input + cachedPrefixTokens,
      tokens_completion: fakeUsage.output,
      native_tokens_cached: cachedPrefixTokens,
      total_cost: cacheReadCost,
      usage: cacheReadCost,
    });
    // $0.007851 for the write, $0.0007854 for the read.
    expect([cacheWriteCost, cacheReadCost]).toEqual([0.007851, 0.0007854]);
    await eventually(async () => (await keyUsage(hash)) === usd(cachePico(pico.cacheWrite) + cachePico(pico.cacheRead)), 10_000);
  });

  it("prices an hour-long cache write at input_cache_write_1h, and a five-minute one at input_cache_write", async () => {
    const { key, client } = await newKey();
    const ask = (system: Anthropic.TextBlockParam[]) => client.messages.create({ model: "anthropic/cache-1h", max_tokens: 1000, system, messages: [{ role: "user", content: "Summarize the manual." }] });
    const hour = await ask(cachedSystem());
    expect(hour.usage).toEqual(written);
    // 12 × $3/M + 2048 × $6/M + 9 × $15/M.
    expect(await generation(hour.id, key)).toMatchObject({ total_cost: usd(cachePico(6_000_000n)) });
    expect(usd(cachePico(6_000_000n))).toBe(0.012459);
    const minutes = await ask(cachedSystem().map((b) => ({ ...b, cache_control: { type: "ephemeral" as const } })));
    expect(await generation(minutes.id, key)).toMatchObject({ total_cost: cacheWriteCost });
  });

  it("charges a request the same buffered and streamed, with the same usage and token counts", async () => {
    const { key, client } = await newKey();
    const params = { model: "anthropic/cache", max_tokens: 1000, system: cachedSystem(), messages: [{ role: "user" as const, content: "Summarize the manual." }] };
    await client.messages.create(params);

    const buffered = await client.messages.create(params);
    const streamed = await client.messages.stream(params).finalMessage();
    expect(streamed.usage).toEqual(buffered.usage);
    expect(buffered.usage).toEqual(read);
    const [a, b] = [await generation(buffered.id, key), await generation(streamed.id, key)];
    const figures = (g: Json) => ({ tokens_prompt: g.tokens_prompt, tokens_completion: g.tokens_completion, native_tokens_cached: g.native_tokens_cached, total_cost: g.total_cost });
    expect(figures(b)).toEqual(figures(a));
    expect(figures(a)).toEqual({ tokens_prompt: 2060, tokens_completion: 9, native_tokens_cached: 2048, total_cost: cacheReadCost });
    expect([a.streamed, b.streamed]).toEqual([false, true]);
  });
});

describe("a spend limit under concurrent /messages requests", () => {
  it("lets only what the limit pays for through, and refuses the rest with 402 billing_error", async () => {
    // $0.055 pays for five requests at $0.01 and never settles at the limit, so every refusal is a 402.
    const { key, hash, client } = await newKey({ limit: 0.055 });
    const before = claude.requests.length;
    const params = { model: "anthropic/cent", max_tokens: 100, messages: [{ role: "user" as const, content: "Hi" }] };
    const outcomes = await Promise.all(
      Array.from({ length: 12 }, async (_, i) => {
        try {
          const message = i % 2 ? await client.messages.stream(params).finalMessage() : await client.messages.create(params);
          return { status: 200, id: message.id, error: undefined };
        } catch (error) {
          if (!(error instanceof Anthropic.APIError)) throw error;
          return { status: error.status, id: undefined, error: error.error as { type: string; error: { type: string; message: string } } };
        }
      }),
    );
    const served = outcomes.filter((o) => o.status === 200);
    const refused = outcomes.filter((o) => o.status !== 200);
    expect(served).toHaveLength(5);
    expect(refused.map((o) => o.status)).toEqual(Array(7).fill(402));
    // A price per request: the refusal says what it can cost and what is left.
    for (const o of refused) expect(o.error).toEqual({ type: "error", error: { type: "billing_error", message: expect.stringMatching(/can cost up to \$0\.01, but only \$[\d.]+ remains/) } });
    expect(claude.requests.length - before).toBe(5);

    const costs = await Promise.all(served.map(async (o) => (await generation(String(o.id), key)).total_cost));
    expect(costs).toEqual(Array(5).fill(0.01));
    await eventually(async () => (await keyUsage(hash)) === 0.05, 10_000);
    // Nothing settles later to push it past the limit.
    expect(await keyUsage(hash)).toBeLessThanOrEqual(0.055);
  });
});

describe("cache markers of the other dialects, and automatic caching", () => {
  it("carries a Chat Completions request's cache markers on its system part and tool to Anthropic", async () => {
    const { key } = await newKey();
    const marker = { type: "ephemeral", ttl: "1h" };
    const tool = { type: "function", function: { name: "lookup", parameters: { type: "object", properties: {} } }, cache_control: marker };
    const body = { model: "anthropic/cache", max_tokens: 100, tools: [tool], messages: [{ role: "system", content: [{ type: "text", text: "Rules", cache_control: marker }] }, { role: "user", content: "Hi" }] };
    expect((await gw.call("POST", "/chat/completions", { key, body })).status).toBe(200);
    const sent = claude.requests.at(-1)!.body;
    expect(sent.system).toEqual([{ type: "text", text: "Rules", cache_control: marker }]);
    expect(sent.tools).toEqual([{ name: "lookup", input_schema: { type: "object", properties: {} }, cache_control: marker }]);
  });

  it("carries a Responses request's cache markers to Anthropic, and prices the cache read of its repeat", async () => {
    const { key } = await newKey();
    const shared = cachedSystem()[0]!.text;
    const input = [{ type: "message", role: "user", content: [{ type: "input_text", text: shared, cache_control: { type: "ephemeral", ttl: "1h" } }, { type: "input_text", text: "Question?" }] }];
    const body = { model: "anthropic/cache", instructions: "Rules", max_output_tokens: 1000, input };
    const first = await gw.call("POST", "/responses", { key, body });
    expect(first.status).toBe(200);
    expect(claude.requests.at(-1)!.body).toMatchObject({
      system: [{ type: "text", text: "Rules" }],
      messages: [{ role: "user", content: [{ type: "text", text: shared, cache_control: { type: "ephemeral", ttl: "1h" } }, { type: "text", text: "Question?" }] }],
    });
    expect(first.body.usage).toMatchObject({ input_tokens: 2060, input_tokens_details: { cached_tokens: 0, cache_write_tokens: 2048 } });

    const second = await gw.call("POST", "/responses", { key, body });
    expect(second.body.usage).toMatchObject({ input_tokens: 2060, input_tokens_details: { cached_tokens: 2048 } });
    expect(await generation(String(second.body.id), key)).toMatchObject({ native_tokens_cached: 2048, total_cost: cacheReadCost });

    // The top-level marker lands on the last block.
    const marked = await gw.call("POST", "/responses", { key, body: { model: "anthropic/cache", max_output_tokens: 100, input: "Hi", cache_control: { type: "ephemeral" } } });
    expect(marked.status).toBe(200);
    expect(claude.requests.at(-1)!.body.messages).toEqual([{ role: "user", content: [{ type: "text", text: "Hi", cache_control: { type: "ephemeral" } }] }]);
  });

  it.each([false, true])("shows an OpenAI-compatible upstream's cached tokens as cache_read_input_tokens, priced at input_cache_read (stream: %s)", async (stream) => {
    const { key, client } = await newKey();
    const params = { model: "vendor/auto-cache", max_tokens: 100, messages: [{ role: "user" as const, content: "Hi" }] };
    const message = stream ? await client.messages.stream(params).finalMessage() : await client.messages.create(params);
    // The fake reports 12 prompt tokens, 2 of them cached, and 5 completion tokens.
    expect(message.usage).toEqual({
      input_tokens: 10,
      output_tokens: 5,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 2,
      cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
    });
    const cost = usd(10n * 1_000_000n + 2n * 100_000n + 5n * 2_000_000n);
    expect(await generation(message.id, key)).toMatchObject({ tokens_prompt: 12, native_tokens_cached: 2, total_cost: cost });
    expect(cost).toBe(0.0000202);
  });
});

describe("a stream that fails before it ends", () => {
  /** Sends a streamed request the fake cuts short; returns its generation record. */
  async function cut(body: Json): Promise<Json> {
    const { key } = await newKey();
    const res = await fetch(`${gw.baseUrl}/api/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": key, "anthropic-version": "2023-06-01" },
      body: JSON.stringify({ max_tokens: 1000, stream: true, messages: [{ role: "user", content: "Weather in Paris?" }], ...body }),
    });
    expect(await res.text()).toContain("event: error");
    return generation(res.headers.get("x-generation-id")!, key);
  }

  it("charges the thinking it relayed, estimated as reasoning", async () => {
    const record = await cut({ model: "anthropic/thinking-cut", thinking: { type: "enabled", budget_tokens: 1024 }, max_tokens: 2000 });
    // "Let me think": 12 characters, 3 tokens at four characters a token.
    expect(record).toMatchObject({ tokens_completion: 3, native_tokens_reasoning: 3, finish_reason: "error" });
    expect(record.total_cost).toBeCloseTo(usd(BigInt(fakeUsage.input) * pico.prompt + 3n * pico.completion), 12);
  });

  it("charges the tool call it relayed: its name and the arguments written so far", async () => {
    const tools = [{ name: "get_weather", description: "Weather by city", input_schema: { type: "object", properties: { city: { type: "string" } } } }];
    const record = await cut({ model: "anthropic/tools-cut", tools });
    // "get_weather" and '{"cit': 16 characters, 4 tokens.
    expect(record).toMatchObject({ tokens_completion: 4, finish_reason: "error" });
  });

  it("keeps the counts message_delta reported when message_stop never comes", async () => {
    const record = await cut({ model: "anthropic/delta-cut" });
    expect(record).toMatchObject({ tokens_prompt: fakeUsage.input, tokens_completion: fakeUsage.output, finish_reason: "error" });
    expect(record.total_cost).toBeCloseTo(usd(BigInt(fakeUsage.input) * pico.prompt + BigInt(fakeUsage.output) * pico.completion), 12);
  });
});
