import { createServer } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { eventually } from "./support/eventually.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";
import { listenLocal } from "./support/listen.js";

/**
 * `long_context` prices a prompt above a token threshold at other rates for the whole generation, as Gemini
 * 2.5 Pro and Grok 4 bill: the charge follows the prompt tokens the provider reports, the hold covers the
 * long-context prices whenever the prompt's bytes may be above the threshold, and price routing compares
 * the prices an estimate of the prompt's tokens will be charged.
 */
let gw: TestGateway;
let stopUpstream: () => Promise<void>;
const seen: Array<Record<string, unknown>> = [];

const threshold = 1000;
const standard = { prompt: 0.000001, completion: 0.000002, cacheRead: 0.0000001 };
const long = { prompt: 0.000002, completion: 0.000004, cacheRead: 0.0000002 };
/** The fake reports a prompt token per two characters of the messages' text, 100 of them cached, and 100 completion tokens. */
const cached = 100;
const completion = 100;

beforeAll(async () => {
  const openai = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { model: string; messages: Array<{ content: string }> };
      seen.push(body);
      const chars = body.messages.reduce((n, m) => n + m.content.length, 0);
      const prompt = Math.ceil(chars / 2);
      const usage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion, prompt_tokens_details: { cached_tokens: cached } };
      const answer = { id: "c1", object: "chat.completion", created: 1, model: body.model, choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }], usage };
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answer));
    });
  });
  const upstream = await listenLocal(openai);
  stopUpstream = upstream.stop;
  const decimal = (usd: number) => usd.toFixed(12);
  const perToken = (p: typeof standard) => ({ prompt: decimal(p.prompt), completion: decimal(p.completion), input_cache_read: decimal(p.cacheRead) });
  const tiered = (upstream_model: string) => ({
    provider: "lc",
    upstream_model,
    pricing: perToken(standard),
    long_context: { above_prompt_tokens: threshold, pricing: perToken(long) },
    max_completion_tokens: 1000,
  });
  // Dearer than the tiered endpoint's standard prices, cheaper than its long-context ones.
  const flat = { provider: "flat", upstream_model: "flat", pricing: { prompt: "0.0000015", completion: "0.000003" }, max_completion_tokens: 1000 };
  const catalog = {
    providers: [
      { slug: "lc", name: "Long Context", adapter: "openai", base_url: upstream.baseUrl, requires_api_key: false },
      { slug: "flat", name: "Flat", adapter: "openai", base_url: upstream.baseUrl, requires_api_key: false },
    ],
    models: [
      { id: "lc/m", name: "lc/m", context_length: 20_000, endpoints: [tiered("m")] },
      { id: "lc/two", name: "lc/two", context_length: 20_000, endpoints: [tiered("tiered"), flat] },
    ],
  };
  gw = await startTestGateway(await catalogEnv(catalog));
});
afterAll(async () => {
  await gw?.stop();
  await stopUpstream?.();
});

async function newKey(limit?: number) {
  const created = await gw.call("POST", "/keys", { body: { name: "long context", ...(limit === undefined ? {} : { limit }) } });
  return { key: String(created.body.key), hash: String(created.body.data?.hash) };
}
const messagesOf = (chars: number) => [{ role: "user", content: "x".repeat(chars) }];
const chat = (key: string, model: string, chars: number, extra: Record<string, unknown> = {}) =>
  gw.call("POST", "/chat/completions", { key, body: { model, messages: messagesOf(chars), max_tokens: 100, ...extra } });
/** What the fake's usage for a prompt of `chars` characters costs at `p`. */
const costOf = (chars: number, p: typeof standard) => (Math.ceil(chars / 2) - cached) * p.prompt + cached * p.cacheRead + completion * p.completion;
const keyUsage = async (hash: string) => Number((await gw.call("GET", `/keys/${hash}`)).body.data?.usage ?? 0);

describe("long-context prices", () => {
  it.each([
    ["above the threshold at the long-context prices", 2400, long],
    ["at or below the threshold at the standard prices", 1600, standard],
  ])("charges a prompt %s", async (_, chars, prices) => {
    const { key, hash } = await newKey();
    const res = await chat(key, "lc/m", chars);
    expect(res.status).toBe(200);
    const cost = costOf(chars, prices);
    expect((res.body.usage as { prompt_tokens: number }).prompt_tokens).toBe(chars / 2);
    expect((res.body.usage as { cost: number }).cost).toBeCloseTo(cost, 12);
    const id = String(res.body.id);
    await eventually(async () => (await gw.call("GET", `/generation?id=${id}`, { key })).status === 200, 5000);
    expect((await gw.call("GET", `/generation?id=${id}`, { key })).body.data?.total_cost).toBeCloseTo(cost, 12);
    await eventually(async () => Math.abs((await keyUsage(hash)) - cost) < 1e-12, 10_000);
  });

  it("holds a prompt whose bytes may be above the threshold at the long-context prices", async () => {
    // About 2,440 bytes and 100 tokens: $0.00264 held at the standard prices, $0.00528 at the long-context ones.
    const refused = await chat((await newKey(0.004)).key, "lc/m", 2400);
    expect(refused.status).toBe(402);
    expect((await chat((await newKey(0.006)).key, "lc/m", 2400)).status).toBe(200);
    // About 540 bytes bound the prompt at or below the threshold: $0.00074 held at the standard prices.
    expect((await chat((await newKey(0.001)).key, "lc/m", 500)).status).toBe(200);
  });

  it("routes by the prices an estimate of the prompt's tokens will be charged", async () => {
    const { key } = await newKey();
    const servedBy = async (chars: number, provider: Record<string, unknown>) => {
      const res = await chat(key, "lc/two", chars, { provider });
      expect(res.status).toBe(200);
      return seen.at(-1)!.model;
    };
    // 400 characters are about 110 tokens: the tiered endpoint is the cheaper; 8,000 are about 2,010, above its threshold.
    expect(await servedBy(400, { sort: "price" })).toBe("tiered");
    expect(await servedBy(8000, { sort: "price" })).toBe("flat");
    expect(await servedBy(400, { max_price: { prompt: 1.2 } })).toBe("tiered");
    expect(await servedBy(8000, { max_price: { prompt: 1.8 } })).toBe("flat");
  });
});
