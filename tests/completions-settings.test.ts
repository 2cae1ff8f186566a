import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { startFakeProvider, type FakeProvider } from "./support/fake-provider.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";
import { recorded } from "./support/media-fixture.js";
import { startReplayProvider, type ReplayProvider } from "./support/replay-provider.js";

/**
 * `POST /completions` through the whole gateway, for what the legacy route does with the settings around its
 * prompt: the echo a provider sends back (never counted as generated text), a preset's system prompt (which
 * the legacy wire has no place for) and reasoning (which it carries where the endpoint lists it).
 */
let gw: TestGateway;
let alpha: FakeProvider;
let claude: ReplayProvider;
let key: string;

const cheap = { prompt: "0.000001", completion: "0.000002" };
const claudePricing = { prompt: "0.000003", completion: "0.000015" };
const model = (id: string, endpoints: Array<[string, string, Record<string, string>]>, supported = ["max_tokens", "temperature", "stop", "seed"]) => ({
  id,
  name: id,
  context_length: 100000,
  endpoints: endpoints.map(([provider, upstream, pricing]) => ({ provider, upstream_model: upstream, pricing, max_completion_tokens: 1000, supported_parameters: supported })),
});

beforeAll(async () => {
  alpha = await startFakeProvider("alpha");
  claude = await startReplayProvider(join(import.meta.dirname, "fixtures/anthropic"), (req) => ({ file: req.body.stream ? "stream.sse" : "message.json" }));
  const catalog = {
    providers: [
      { slug: "alpha", name: "Alpha", adapter: "openai-compatible", base_url: alpha.baseUrl, requires_api_key: false },
      { slug: "claude", name: "Claude", adapter: "anthropic", base_url: claude.baseUrl, api_key_env: "CLAUDE_KEY" },
    ],
    models: [
      model("text/ok", [["alpha", "ok", cheap]]),
      model("text/silent", [["alpha", "no-usage", cheap]]),
      model("text/think", [["alpha", "ok", cheap]], ["max_tokens", "temperature", "reasoning"]),
      model("text/mixed", [["alpha", "ok", cheap], ["claude", "text", claudePricing]]),
    ],
  };
  gw = await startTestGateway({ ...(await catalogEnv(catalog)), CLAUDE_KEY: "claude-secret" });
  key = String((await gw.call("POST", "/keys", { body: { name: "completions-settings" } })).body.key);
});
afterAll(async () => {
  await gw?.stop();
  await alpha?.stop();
  await claude?.stop();
});

type Usage = { prompt_tokens: number; completion_tokens: number; cost: number };
type Answer = { choices: Array<{ text: string; finish_reason: string | null }>; usage: Usage; openrouter_metadata?: { summary?: string } };

const complete = async (body: Record<string, unknown>, headers: Record<string, string> = {}) => {
  const res = await gw.call("POST", "/completions", { key, body, headers });
  return { status: res.status, id: res.headers.get("x-generation-id"), body: res.body as unknown as Answer & { error?: { message: string } } };
};

/** A streamed request read whole: its generation id, text and the usage of its last frame. */
async function streamed(body: Record<string, unknown>) {
  const res = await fetch(`${gw.apiUrl}/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ ...body, stream: true }),
  });
  const frames = (await res.text())
    .split("\n\n")
    .filter((f) => f.startsWith("data: {"))
    .map((f) => JSON.parse(f.slice(6)) as { choices: Array<{ text: string }>; usage?: Usage });
  return { id: res.headers.get("x-generation-id")!, text: frames.flatMap((f) => f.choices.map((c) => c.text)).join(""), usage: frames.find((f) => f.usage)!.usage! };
}

/** The stored generation, once its record is committed. */
const generation = (id: string) => recorded(gw, key, id);

const lastAlpha = () => alpha.requests.at(-1)!;

describe("an echoed prompt, from a provider that reports no usage", () => {
  const prompt = "lorem ipsum dolor sit amet ".repeat(300);
  // The prompt's estimate reads its chat form; "Hello from alpha" is 16 characters, 4 tokens at four a token.
  const plain = { prompt_tokens: 2033, completion_tokens: 4 };
  const plainCost = 2033 * 0.000001 + 4 * 0.000002;

  it("is not estimated as completion tokens, buffered, and the caller still gets it", async () => {
    const without = await complete({ model: "text/silent", prompt });
    const echoed = await complete({ model: "text/silent", prompt, echo: true });
    expect(lastAlpha().body).toMatchObject({ echo: true, prompt });
    expect(without.body.usage).toMatchObject(plain);
    expect(echoed.body.usage).toMatchObject(plain);
    expect(echoed.body.usage.cost).toBeCloseTo(plainCost, 12);
    expect(echoed.body.choices[0]?.text).toBe(`${prompt}Hello from alpha`);
    const stored = await generation(echoed.id!);
    expect(stored).toMatchObject({ tokens_prompt: 2033, tokens_completion: 4 });
    expect(stored.total_cost).toBeCloseTo(plainCost, 12);
  });

  it("is not estimated as completion tokens, streamed, and the caller still gets it", async () => {
    const echoed = await streamed({ model: "text/silent", prompt, echo: true });
    expect(lastAlpha().body).toMatchObject({ echo: true, stream: true });
    expect(echoed.text).toBe(`${prompt}Hello from alpha`);
    expect(echoed.usage).toMatchObject(plain);
    expect(echoed.usage.cost).toBeCloseTo(plainCost, 12);
    const stored = await generation(echoed.id);
    expect(stored).toMatchObject({ tokens_prompt: 2033, tokens_completion: 4 });
    expect(stored.total_cost).toBeCloseTo(plainCost, 12);
  });
});

describe("a preset's system prompt", () => {
  beforeAll(async () => {
    for (const [slug, target] of [
      ["sys", "text/ok"],
      ["sys-mixed", "text/mixed"],
    ]) {
      const saved = await gw.call("POST", "/presets", { body: { slug, model: target, system_prompt: "SECRET SYSTEM PROMPT" } });
      expect(saved.status, slug).toBe(200);
    }
  });

  it("is never merged into the legacy prompt: a model with only legacy routes answers 400 naming it", async () => {
    const before = alpha.requests.length;
    for (const extra of [{ echo: true }, { suffix: " the end" }]) {
      const refused = await complete({ model: "@preset/sys", prompt: "Once upon", ...extra });
      expect(refused.status, JSON.stringify(extra)).toBe(400);
      expect(refused.body.error?.message, JSON.stringify(extra)).toMatch(/system_prompt/);
      expect(JSON.stringify(refused.body)).not.toContain("SECRET");
    }
    expect(alpha.requests.length).toBe(before);
  });

  it("goes to a chat endpoint of the model as its system message, the legacy route left out", async () => {
    const before = alpha.requests.length;
    const answer = await complete({ model: "@preset/sys-mixed", prompt: "Once upon", echo: true });
    expect(answer.status).toBe(200);
    expect(answer.body.choices[0]?.text).toBe("Once uponHello! How can I help you today?");
    const sent = claude.requests.at(-1)!.body;
    expect(JSON.stringify(sent.system)).toContain("SECRET SYSTEM PROMPT");
    expect(JSON.stringify(sent.messages)).not.toContain("SECRET");
    expect(alpha.requests.length).toBe(before);
  });
});

describe("reasoning", () => {
  it("reaches the legacy route of an endpoint that lists it", async () => {
    const answer = await complete({ model: "text/think", prompt: "x", reasoning: { effort: "high" } });
    expect(answer.status).toBe(200);
    expect(lastAlpha()).toMatchObject({ path: "/v1/completions", body: { prompt: "x", reasoning: { effort: "high" } } });
    await streamed({ model: "text/think", prompt: "x", reasoning: { max_tokens: 200 } });
    expect(lastAlpha().body).toMatchObject({ stream: true, reasoning: { max_tokens: 200 } });
  });

  it("is named as dropped where the endpoint does not list it, and left out under require_parameters", async () => {
    const answer = await complete({ model: "text/ok", prompt: "x", reasoning: { effort: "high" } }, { "x-openrouter-metadata": "enabled" });
    expect(answer.status).toBe(200);
    expect(lastAlpha().body).not.toHaveProperty("reasoning");
    expect(answer.body.openrouter_metadata?.summary).toMatch(/unsupported parameters dropped: reasoning/);
    const required = await complete({ model: "text/ok", prompt: "x", reasoning: { effort: "high" }, provider: { require_parameters: true } });
    expect(required.status).toBe(404);
  });
});
