import Anthropic from "@anthropic-ai/sdk";
import { OpenRouter } from "@openrouter/sdk";
import OpenAI from "openai";
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { eventually } from "./support/eventually.js";
import { cachedPrefixTokens, fakeUsage, startFakeAnthropic, type FakeAnthropic } from "./support/fake-anthropic.js";
import { startFakeProvider, type FakeProvider } from "./support/fake-provider.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";
import { startReplayProvider, type ReplayProvider } from "./support/replay-provider.js";
import { startRetrievalFixture, type RetrievalFixture } from "./support/retrieval-fixture.js";

/**
 * The fields of `GET /generation` a record fills from what happened: the provider's id of a streamed answer,
 * the generation a response cache hit replayed, the upstream model a hit names in the activity, what prompt
 * caching saved, and when the request arrived.
 */
type Json = Record<string, unknown>;

let gw: TestGateway;
let alpha: FakeProvider;
let claude: FakeAnthropic;
let gemini: ReplayProvider;
let key: string;
let openai: OpenAI;
let anthropic: Anthropic;
let sdk: OpenRouter;

const plain = { prompt: "0.000001", completion: "0.000002" };
/** Anthropic's prices: a cache read is a tenth of the prompt price, a cache write a quarter more. */
const claudePricing = { prompt: "0.000003", completion: "0.000015", input_cache_read: "0.0000003", input_cache_write: "0.00000375" };
const geminiPricing = { prompt: "0.0000003", completion: "0.0000025", input_cache_read: "0.000000075" };
const cached = { "X-OpenRouter-Cache": "true" };

const model = (id: string, provider: string, upstream: string, pricing: Json) => ({
  id,
  name: id,
  context_length: 200000,
  endpoints: [{ provider, upstream_model: upstream, pricing, max_completion_tokens: 8192 }],
});

beforeAll(async () => {
  alpha = await startFakeProvider("alpha");
  claude = await startFakeAnthropic();
  gemini = await startReplayProvider(join(import.meta.dirname, "fixtures/google"), () => ({ file: "stream.sse" }));
  const catalog = {
    providers: [
      { slug: "alpha", name: "Alpha", adapter: "openai-compatible", base_url: alpha.baseUrl, api_key_env: "ALPHA_KEY" },
      { slug: "claude", name: "Claude", adapter: "anthropic", base_url: claude.baseUrl, api_key_env: "CLAUDE_KEY" },
      { slug: "gemini", name: "Gemini", adapter: "google", base_url: gemini.baseUrl, api_key_env: "GEMINI_KEY" },
    ],
    models: [
      model("chat/ok", "alpha", "ok", plain),
      model("chat/slow", "alpha", "slow", plain),
      model("anthropic/cache", "claude", "text", claudePricing),
      model("google/text", "gemini", "text", geminiPricing),
    ],
  };
  gw = await startTestGateway({ ...(await catalogEnv(catalog)), ALPHA_KEY: "alpha-secret", CLAUDE_KEY: "claude-secret", GEMINI_KEY: "gemini-secret" });
  key = String((await gw.call("POST", "/keys", { body: { name: "generation fields" } })).body.key);
  openai = new OpenAI({ apiKey: key, baseURL: gw.apiUrl, maxRetries: 0 });
  anthropic = new Anthropic({ apiKey: key, baseURL: `${gw.baseUrl}/api`, maxRetries: 0 });
  // The SDK validates every record it reads against OpenRouter's schema.
  sdk = new OpenRouter({ apiKey: key, serverURL: gw.apiUrl, retryConfig: { strategy: "none" } });
});
afterAll(async () => {
  await gw?.stop();
  await alpha?.stop();
  await claude?.stop();
  await gemini?.stop();
});

/** The record as the router answers it, once it is there. */
async function generation(id: string): Promise<Json> {
  await eventually(async () => (await gw.call("GET", `/generation?id=${id}`, { key })).status === 200, 5000);
  return (await gw.call("GET", `/generation?id=${id}`, { key })).body.data as Json;
}

/** The row of `GET /generations` (which reads the ledger the completed events fill) for `id`, once it is listed. */
async function listed(id: string): Promise<Json> {
  let row: Json | undefined;
  await eventually(async () => {
    row = ((await gw.call("GET", "/generations?limit=200")).body.data ?? []).find((g) => g.id === id);
    return row !== undefined;
  }, 10_000);
  return row!;
}

/** Streams a chat completion through the openai client; returns the generation id. */
async function streamChat(modelId: string, content: string): Promise<string> {
  const stream = await openai.chat.completions.create({ model: modelId, messages: [{ role: "user", content }], stream: true });
  let id = "";
  for await (const chunk of stream) id = chunk.id;
  return id;
}

describe("upstream_id of a streamed generation", () => {
  it("is the id the provider's stream carried, as a buffered generation's is its answer's", async () => {
    const buffered = await openai.chat.completions.create({ model: "chat/ok", messages: [{ role: "user", content: "buffered" }] });
    expect((await generation(buffered.id)).upstream_id).toMatch(/^up-\d+$/);

    const fromAlpha = await streamChat("chat/ok", "streamed");
    expect((await sdk.generations.getGeneration({ id: fromAlpha })).data.upstreamId).toBe("up-stream");
    const fromClaude = await streamChat("anthropic/cache", "streamed");
    expect((await generation(fromClaude)).upstream_id).toBe("msg_fake_1");
    const fromGemini = await streamChat("google/text", "streamed");
    expect((await generation(fromGemini)).upstream_id).toBe("tiQoaP3pLZ6nz7IPz9Hj-Qk");
  });
});

describe("a response cache hit's record", () => {
  it("names the generation it replayed in response_cache_source_id (null on the original), and lists the upstream model that served it", async () => {
    const body = { model: "chat/ok", messages: [{ role: "user", content: `Cache ${randomUUID()}` }] };
    const first = await gw.call("POST", "/chat/completions", { key, headers: cached, body });
    const hit = await gw.call("POST", "/chat/completions", { key, headers: cached, body });
    expect(hit.headers.get("x-openrouter-cache-status")).toBe("HIT");
    const [originalId, hitId] = [String(first.body.id), String(hit.body.id)];

    const record = (await sdk.generations.getGeneration({ id: hitId })).data;
    expect(record.responseCacheSourceId).toBe(originalId);
    expect(await generation(hitId)).toMatchObject({ response_cache_source_id: originalId, cache_source_id: originalId, upstream_id: null });
    expect((await generation(originalId)).response_cache_source_id).toBeNull();

    // The activity names an endpoint as `<provider>:<upstream model>`: a hit names the one that served its answer.
    expect(await listed(hitId)).toMatchObject({ provider: "alpha", upstream_model: "ok", cost: 0 });
    expect(await listed(originalId)).toMatchObject({ provider: "alpha", upstream_model: "ok" });
  });

  it("lists a streamed hit with the upstream model too", async () => {
    const content = `Stream cache ${randomUUID()}`;
    const stream = () => new OpenAI({ apiKey: key, baseURL: gw.apiUrl, maxRetries: 0, defaultHeaders: cached }).chat.completions.create({ model: "google/text", messages: [{ role: "user", content }], stream: true });
    for await (const _ of await stream()) void _;
    let hitId = "";
    for await (const chunk of await stream()) hitId = chunk.id;
    expect(await generation(hitId)).toMatchObject({ streamed: true, upstream_id: null, cache_discount: null });
    expect(await listed(hitId)).toMatchObject({ provider: "gemini", upstream_model: "text" });
  });
});

describe("cache_discount", () => {
  /** A system prompt of about 2,000 tokens marked for the cache, unique to the test, so that its first use writes the cache. */
  const cachedSystem = (): Anthropic.TextBlockParam[] => [
    { type: "text", text: `Case ${randomUUID()}. ${"Answer from the shared reference manual only. ".repeat(190)}`, cache_control: { type: "ephemeral" } },
  ];
  const promptTokens = fakeUsage.input + cachedPrefixTokens;

  it("is what the prompt would have cost at the prompt price less what it was charged: negative for a cache write, positive for a read", async () => {
    const params = { model: "anthropic/cache", max_tokens: 1000, system: cachedSystem(), messages: [{ role: "user" as const, content: "Summarize the manual." }] };
    const write = await anthropic.messages.create(params);
    expect(write.usage.cache_creation_input_tokens).toBe(cachedPrefixTokens);
    // 2048 written tokens at $3.75/M instead of $3/M.
    expect((await generation(write.id)).cache_discount).toBeCloseTo(-cachedPrefixTokens * 0.00000075, 12);
    const read = await anthropic.messages.stream(params).finalMessage();
    expect(read.usage.cache_read_input_tokens).toBe(cachedPrefixTokens);
    // 2048 read tokens at $0.30/M instead of $3/M.
    const record = (await sdk.generations.getGeneration({ id: read.id })).data;
    expect(record.cacheDiscount).toBeCloseTo(cachedPrefixTokens * 0.0000027, 12);
    expect(record.tokensPrompt).toBe(promptTokens);
    expect(record.totalCost).toBeCloseTo(promptTokens * 0.000003 - cachedPrefixTokens * 0.0000027 + fakeUsage.output * 0.000015, 12);
  });

  it("counts a stream's cached tokens, and is null where no prompt token was read from or written to a cache", async () => {
    // The recorded Gemini stream reports 4 of its prompt tokens from the cache.
    const streamed = await streamChat("google/text", "cached prefix");
    const record = await generation(streamed);
    expect(record.native_tokens_cached).toBe(4);
    expect(record.cache_discount).toBeCloseTo(4 * (0.0000003 - 0.000000075), 15);

    const uncached = await anthropic.messages.create({ model: "anthropic/cache", max_tokens: 100, messages: [{ role: "user", content: "No cache here." }] });
    expect((await sdk.generations.getGeneration({ id: uncached.id })).data.cacheDiscount).toBeNull();
  });
});

describe("created_at of GET /generation", () => {
  it("is when the request arrived, as GET /generations lists it, before and after the record is written", async () => {
    const sent = Date.now();
    // The fake thinks 2.3 s before it answers: a record written after the answer is well after the arrival.
    const res = await gw.call("POST", "/chat/completions", { key, body: { model: "chat/slow", messages: [{ role: "user", content: "Take your time" }] } });
    expect(res.status).toBe(200);
    const id = String(res.body.id);
    const early = (await gw.call("GET", `/generation?id=${id}`, { key })).body.data as Json;
    const arrived = Date.parse(String(early.created_at));
    expect(arrived).toBeGreaterThanOrEqual(sent - 50);
    expect(arrived).toBeLessThan(sent + 1000);

    const row = await listed(id);
    expect(Date.parse(String(row.created_at))).toBe(arrived);
    const written = (await sdk.generations.getGeneration({ id })).data;
    expect(written.createdAt).toBe(String(early.created_at));
    expect(Date.parse(written.createdAt)).toBe(arrived);
  });
});

describe("embeddings records", () => {
  let r: RetrievalFixture;
  beforeAll(async () => {
    r = await startRetrievalFixture();
  });
  afterAll(() => r?.stop());

  it("have no cache discount, and a cache hit lists the upstream model of the vectors it replayed", async () => {
    const client = new OpenAI({ apiKey: r.key, baseURL: r.gw.apiUrl, maxRetries: 0, defaultHeaders: cached });
    const input = [`vectors ${randomUUID()}`];
    const first = await client.embeddings.create({ model: "emb/small", input, encoding_format: "float" }).withResponse();
    const hit = await client.embeddings.create({ model: "emb/small", input, encoding_format: "float" }).withResponse();
    expect(hit.response.headers.get("x-openrouter-cache-status")).toBe("HIT");
    const [originalId, hitId] = [first.response.headers.get("x-generation-id")!, hit.response.headers.get("x-generation-id")!];
    const read = async (id: string) => {
      await eventually(async () => (await r.gw.call("GET", `/generation?id=${id}`, { key: r.key })).status === 200, 5000);
      return (await r.gw.call("GET", `/generation?id=${id}`, { key: r.key })).body.data as Json;
    };
    expect(await read(originalId)).toMatchObject({ api_type: "embeddings", cache_discount: null, response_cache_source_id: null });
    expect(await read(hitId)).toMatchObject({ api_type: "embeddings", cache_discount: null, response_cache_source_id: originalId });
    let row: Json | undefined;
    await eventually(async () => {
      row = ((await r.gw.call("GET", "/generations?limit=200")).body.data ?? []).find((g) => g.id === hitId);
      return row !== undefined;
    }, 10_000);
    expect(row).toMatchObject({ provider: "oa", upstream_model: "ok" });
  });
});
