import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";
import { startFakeUpstream, type FakeUpstream, type Received } from "./support/recording-upstream.js";

/**
 * The output a provider is allowed never exceeds what the spend hold covers. The fakes are lenient: each reports
 * every completion token its request allowed, whatever the catalog says of the endpoint, so a charge capped at
 * the hold below the provider's bill shows a request that allowed more than was held.
 */
let gw: TestGateway;
let up: FakeUpstream;
let key: string;

type Json = Record<string, unknown>;

const context = 8000;
const promptTokens = 10;
const pricing = { prompt: "0.000001", completion: "0.00001" };
const user = [{ role: "user", content: "Say hello" }];

/**
 * The completion tokens one choice of a Chat Completions fake may produce: the limit it honours (the upstream
 * model name says which field), else the context its prompt leaves.
 */
function allowed(r: Received): number {
  const field = r.body.model === "honours-max-completion-tokens" ? "max_completion_tokens" : "max_tokens";
  const limit = r.body[field];
  return typeof limit === "number" ? limit : context - promptTokens;
}

function reply(r: Received) {
  if (r.path.startsWith("/anthropic/")) {
    const usage = { input_tokens: promptTokens, output_tokens: Number(r.body.max_tokens) };
    return { json: { id: "msg_1", type: "message", role: "assistant", model: r.body.model, content: [{ type: "text", text: "hi" }], stop_reason: "max_tokens", stop_sequence: null, usage } };
  }
  // `n` as the provider reads it, a string included.
  const choices = Math.max(1, Number(r.body.n ?? 1) || 1);
  const completion = allowed(r) * choices;
  return {
    json: {
      id: "up-1",
      object: "chat.completion",
      created: 1,
      model: r.body.model,
      choices: Array.from({ length: choices }, (_, index) => ({ index, finish_reason: "length", message: { role: "assistant", content: "hi" } })),
      usage: { prompt_tokens: promptTokens, completion_tokens: completion, total_tokens: promptTokens + completion },
    },
  };
}

beforeAll(async () => {
  up = await startFakeUpstream();
  up.answer(reply);
  const endpoint = (provider: string, upstream: string, max?: number) => ({ provider, upstream_model: upstream, pricing, ...(max ? { max_completion_tokens: max } : {}) });
  const model = (id: string, ...endpoints: Json[]) => ({ id, name: id, context_length: context, endpoints });
  const catalog = {
    providers: [
      { slug: "lenient", name: "Lenient", adapter: "openai-compatible", base_url: `${up.origin}/compat/v1`, requires_api_key: false },
      { slug: "claude", name: "Claude", adapter: "anthropic", base_url: `${up.origin}/anthropic/v1`, requires_api_key: false },
    ],
    models: [
      model("limits/max-tokens", endpoint("lenient", "honours-max-tokens", 4000)),
      model("limits/max-completion-tokens", endpoint("lenient", "honours-max-completion-tokens", 4000)),
      model("limits/open", endpoint("lenient", "honours-max-tokens")),
      model("limits/claude", endpoint("claude", "claude-fake", 4000)),
      model("limits/claude-listed", { ...endpoint("claude", "claude-fake", 4000), supported_parameters: ["max_tokens", "n"] }),
    ],
  };
  gw = await startTestGateway(await catalogEnv(catalog));
  key = await newKey();
});
afterAll(async () => {
  await gw?.stop();
  await up?.stop();
});

async function newKey(settings: Json = {}): Promise<string> {
  const created = await gw.call("POST", "/keys", { body: { name: "output-limits", ...settings } });
  expect(created.status).toBe(201);
  return String(created.body.key);
}

const metadata = { "X-OpenRouter-Metadata": "enabled" };
const chat = (body: Json, headers: Record<string, string> = {}, as = key) => gw.call("POST", "/chat/completions", { key: as, body: { messages: user, ...body }, headers });
const summaryOf = (body: Json) => String((body.openrouter_metadata as { summary?: string } | undefined)?.summary);

/** What the key was charged and what the provider's figures came to, for an answer that must have succeeded. */
function charges(r: { status: number; body: Json }) {
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  const usage = r.body.usage as { cost: number; completion_tokens: number; cost_details: { upstream_inference_cost: number } };
  return { charged: usage.cost, billed: usage.cost_details.upstream_inference_cost, completion: usage.completion_tokens };
}

/** The provider's bill at the endpoint's prices for `completion` tokens over the fake's prompt. */
const billFor = (completion: number) => promptTokens * 0.000001 + completion * 0.00001;

describe("an OpenAI-compatible endpoint", () => {
  it("gets one output limit, the one held, in each field the request gave", async () => {
    for (const model of ["limits/max-tokens", "limits/max-completion-tokens"]) {
      const r = await chat({ model, max_completion_tokens: 5, max_tokens: 2000 });
      expect(up.last().body, model).toMatchObject({ max_completion_tokens: 5, max_tokens: 5 });
      const { charged, billed, completion } = charges(r);
      expect(completion, model).toBe(5);
      expect(billed, model).toBeCloseTo(billFor(5), 12);
      expect(charged, model).toBeCloseTo(billed, 12);
    }
  });

  it("leaves a field the request did not give unset", async () => {
    await chat({ model: "limits/max-completion-tokens", max_completion_tokens: 50 });
    expect(up.last().body.max_completion_tokens).toBe(50);
    expect(up.last().body).not.toHaveProperty("max_tokens");
  });

  it("gets a limit above the catalog's maximum lowered to it", async () => {
    const r = await chat({ model: "limits/max-tokens", max_tokens: 10_000 });
    expect(up.last().body.max_tokens).toBe(4000);
    const { charged, billed } = charges(r);
    expect(billed).toBeCloseTo(billFor(4000), 12);
    expect(charged).toBeCloseTo(billed, 12);
  });

  it("is held for every choice of n, as the number it sends", async () => {
    const r = await chat({ model: "limits/max-tokens", max_tokens: 100, n: 3 });
    expect(up.last().body.n).toBe(3);
    const { charged, billed } = charges(r);
    expect(billed).toBeCloseTo(billFor(300), 12);
    expect(charged).toBeCloseTo(billed, 12);
  });

  it("refuses an n that is not a number before a provider could read more choices than are held", async () => {
    const before = up.requests.length;
    const r = await chat({ model: "limits/max-tokens", max_tokens: 100, n: "3" });
    expect(r.status).toBe(400);
    expect(JSON.stringify(r.body.error)).toMatch(/\bn\b/);
    expect(up.requests.length).toBe(before);
  });

  it("without a limit, on an endpoint without a maximum, is held for the whole context", async () => {
    // The prompt's bound in bytes is above the tokens the provider counts, so the context it leaves is larger.
    const r = await chat({ model: "limits/open" });
    expect(up.last().body).not.toHaveProperty("max_tokens");
    const { charged, billed } = charges(r);
    expect(billed).toBeCloseTo(billFor(context - promptTokens), 12);
    expect(charged).toBeCloseTo(billed, 12);
  });
});

describe("an Anthropic endpoint", () => {
  it("gets max_tokens lowered to the catalog's maximum, the explicit limit first", async () => {
    const r = await chat({ model: "limits/claude", max_tokens: 10_000 });
    expect(up.last().body.max_tokens).toBe(4000);
    const { charged, billed } = charges(r);
    expect(billed).toBeCloseTo(billFor(4000), 12);
    expect(charged).toBeCloseTo(billed, 12);
    await chat({ model: "limits/claude", max_completion_tokens: 5, max_tokens: 2000 });
    expect(up.last().body.max_tokens).toBe(5);
  });

  it("names n in the summary, since one choice comes back, and holds one", async () => {
    // One choice of 100 tokens costs $0.001 and a little for the prompt: the limit pays one, not three.
    const limited = await newKey({ limit: 0.002 });
    const r = await chat({ model: "limits/claude", max_tokens: 100, n: 3 }, metadata, limited);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(up.last().body).not.toHaveProperty("n");
    expect(r.body.choices).toHaveLength(1);
    expect(summaryOf(r.body)).toMatch(/dropped: .*\bn\b/);
    const single = await chat({ model: "limits/claude", max_tokens: 100, n: 1 }, metadata);
    expect(summaryOf(single.body)).not.toContain("dropped");
  });

  it("holds a prompt's text whole, though it starts with data: or sits in a response format's schema", async () => {
    // 6,000 prompt bytes cost up to $0.006, which a key of $0.003 cannot pay; held as an image's 2,000 tokens they fit.
    const limited = await newKey({ limit: 0.003 });
    const text = `data:${"x".repeat(5995)}`;
    const before = up.requests.length;
    const asText = await chat({ model: "limits/open", max_tokens: 10, messages: [{ role: "user", content: text }] }, {}, limited);
    expect(asText.status, JSON.stringify(asText.body)).toBe(402);
    const schema = { type: "json_schema", json_schema: { name: "r", schema: { type: "object", description: "y".repeat(6000) } } };
    const asSchema = await chat({ model: "limits/open", max_tokens: 10, response_format: schema }, {}, limited);
    expect(asSchema.status, JSON.stringify(asSchema.body)).toBe(402);
    expect(up.requests.length).toBe(before);
  });

  it("refuses n above 1 under provider.require_parameters, before Anthropic is called, though the catalog lists it", async () => {
    const before = up.requests.length;
    const r = await chat({ model: "limits/claude-listed", max_tokens: 100, n: 3, provider: { require_parameters: true } });
    expect(r.status).toBe(400);
    expect(JSON.stringify(r.body.error)).toMatch(/\bn\b.*require_parameters/);
    expect(up.requests.length).toBe(before);
  });
});
