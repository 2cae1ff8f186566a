import { OpenRouter } from "@openrouter/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "./support/eventually.js";
import { fakeTokens, fakeVector } from "./support/fake-retrieval.js";
import { limitedKey, perToken, startRetrievalFixture, type RetrievalFixture } from "./support/retrieval-fixture.js";

let r: RetrievalFixture;
let openai: OpenAI;
let sdk: OpenRouter;

beforeAll(async () => {
  r = await startRetrievalFixture();
  openai = new OpenAI({ apiKey: r.key, baseURL: r.gw.apiUrl, maxRetries: 0 });
  sdk = new OpenRouter({ apiKey: r.key, serverURL: r.gw.apiUrl, retryConfig: { strategy: "none" } });
});
afterAll(() => r.stop());

const embed = (body: Record<string, unknown>, key = r.key) => r.gw.call("POST", "/embeddings", { key, body });
const lastRequest = () => r.fake.requests.at(-1)!;
const decode = (base64: string) => [...new Float32Array(new Uint8Array(Buffer.from(base64, "base64")).buffer)];
const tokensOf = (inputs: Array<string | number[]>) => inputs.reduce((sum, i) => sum + fakeTokens(i), 0);
const generation = async (id: string) => {
  await eventually(async () => (await r.gw.call("GET", `/generation?id=${id}`, { key: r.key })).status === 200, 5000);
  return (await r.gw.call("GET", `/generation?id=${id}`, { key: r.key })).body.data as Record<string, unknown>;
};

describe("POST /embeddings", () => {
  it("answers the openai SDK in floats, vectors in input order, charged per token", async () => {
    const input = ["The quick brown fox", "jumps over", "the lazy dog"];
    const result = await openai.embeddings.create({ model: "emb/small", input, encoding_format: "float" });
    expect(result.data.map((d) => d.index)).toEqual([0, 1, 2]);
    expect(result.data.map((d) => d.embedding)).toEqual(input.map((i) => fakeVector(i)));
    const upstream = lastRequest();
    expect(upstream.path).toBe("/openai/embeddings");
    expect(upstream.headers.authorization).toBe("Bearer sk-oa");
    expect(upstream.body).toEqual({ model: "ok", input, encoding_format: "float" });
    expect(result.usage).toMatchObject({ prompt_tokens: tokensOf(input), total_tokens: tokensOf(input) });
    expect((result.usage as unknown as { cost: number }).cost).toBeCloseTo(tokensOf(input) * perToken, 12);
    expect(result.model).toBe("emb/small");
  });

  it("passes base64 and dimensions through for the SDK's default encoding, and the user only as a hash", async () => {
    const result = await openai.embeddings.create({ model: "emb/small", input: "hello", dimensions: 8, user: "alice" });
    // The SDK asked for base64 and decoded it.
    expect(lastRequest().body).toMatchObject({ encoding_format: "base64", dimensions: 8 });
    expect(result.data[0]!.embedding).toEqual(fakeVector("hello", 8));
    expect(lastRequest().body.user).toMatch(/^[0-9a-f]{32}$/);
  });

  it("encodes a float-only provider's vectors as base64 when asked, and falls back past a failing endpoint", async () => {
    const res = await embed({ model: "emb/fallback", input: ["alpha", "beta"], encoding_format: "base64" });
    expect(res.status).toBe(200);
    const data = res.body.data as unknown as Array<{ embedding: string }>;
    expect(data.map((d) => decode(d.embedding))).toEqual([fakeVector("alpha"), fakeVector("beta")]);
    expect(lastRequest().path).toBe("/gemini/models/ok:batchEmbedContents");
    expect(res.body.provider).toBe("gem");
    const record = await generation(String(res.body.id));
    expect(record).toMatchObject({ provider_name: "gem", api_type: "embeddings" });
  });

  it("answers the same vectors whether the provider's answer is relayed as it came or has escapes to read", async () => {
    const input = ["plain", "text"];
    const relayed = await embed({ model: "emb/small", input, encoding_format: "base64" });
    const escaped = await embed({ model: "emb/escaped", input, encoding_format: "base64" });
    expect(relayed.body.data).toEqual(escaped.body.data);
    expect((relayed.body.data as unknown as Array<{ embedding: string }>).map((d) => decode(d.embedding))).toEqual(input.map((i) => fakeVector(i)));
    expect(relayed.headers.get("content-length")).toBe(String(Buffer.byteLength(JSON.stringify(relayed.body))));
    expect(relayed.body).toMatchObject({ object: "list", model: "emb/small", provider: "oa", usage: { prompt_tokens: tokensOf(input), total_tokens: tokensOf(input), is_byok: false } });
  });

  it("is valid for @openrouter/sdk, which also lists the embedding models", async () => {
    const result = await sdk.embeddings.generate({ requestBody: { model: "emb/small", input: ["one", "two"] } });
    expect(typeof result === "object" && result.data.length).toBe(2);
    const models = await sdk.embeddings.listModels({});
    const ids = models.result.data.map((m) => m.id);
    expect(ids).toContain("emb/small");
    expect(ids).not.toContain("rr/cohere");
    expect(ids).not.toContain("chat/model");
  });

  it("accepts 2,048 inputs where the catalog allows them, holding and charging exactly their tokens", async () => {
    const inputs = Array.from({ length: 2048 }, (_, i) => [i, i + 1, i + 2, i + 3]);
    const cost = 2048 * 4 * perToken;
    const poor = await limitedKey(r.gw, cost - 0.0001);
    const refused = await embed({ model: "emb/small", input: inputs }, poor.key);
    expect(refused.status).toBe(402);
    expect((refused.body.error as unknown as { metadata: Record<string, number> }).metadata.requested_usd).toBeCloseTo(cost, 12);
    const enough = await limitedKey(r.gw, cost);
    const res = await embed({ model: "emb/small", input: inputs }, enough.key);
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(2048);
    expect(res.body.usage).toMatchObject({ prompt_tokens: 8192 });
    expect((res.body.usage as { cost: number }).cost).toBeCloseTo(cost, 12);
    expect(lastRequest().body.input).toEqual(inputs);
    await eventually(async () => Number((await r.gw.call("GET", `/keys/${enough.hash}`)).body.data?.usage) === cost, 5000);
  });

  it("refuses more inputs than the endpoint's catalog entry allows, naming its limit", async () => {
    const before = r.fake.requests.length;
    const over = await embed({ model: "emb/thousand", input: Array.from({ length: 2048 }, () => "x") });
    expect(over.status).toBe(400);
    expect(over.body.error?.message).toContain("at most 1000 inputs per request, not 2048");
    const past = await embed({ model: "emb/small", input: Array.from({ length: 2049 }, () => "x") });
    expect(past.status).toBe(400);
    expect(past.body.error?.message).toContain("at most 2048 inputs per request, not 2049");
    expect(r.fake.requests.length).toBe(before);
  });

  it("refuses an input longer than the endpoint's tokens per input, and parameters its entry does not support", async () => {
    const long = await embed({ model: "emb/short", input: [Array.from({ length: 17 }, (_, i) => i)] });
    expect(long.status).toBe(400);
    expect(long.body.error?.message).toContain("input 0 has 17 tokens; at most 16 per input");
    const text = await embed({ model: "emb/short", input: "x".repeat(16 * 6 + 1) });
    expect(text.body.error?.message).toContain("input 0 is longer than 16 tokens allow");
    expect((await embed({ model: "emb/short", input: "x".repeat(90) })).status).toBe(200);
    const dims = await embed({ model: "emb/thousand", input: "x", dimensions: 8 });
    expect(dims.status).toBe(400);
    expect(dims.body.error?.message).toContain("no dimensions");
    const chat = await embed({ model: "chat/model", input: "x" });
    expect(chat.status).toBe(400);
    expect(chat.body.error?.message).toContain("is not an embedding model");
    const image = await embed({ model: "emb/cohere", input: [{ content: [{ type: "text", text: "a cat" }, { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } }] }] });
    expect(image.body.error?.message).toContain("no image input");
    const parts = await embed({ model: "emb/cohere", input: [{ content: [{ type: "text", text: "a cat" }] }] });
    expect(parts.status).toBe(200);
    const unknown = await embed({ model: "emb/small", input: "x", temperature: 1 });
    expect(unknown.status).toBe(400);
    expect((await embed({ model: "emb/small", input: [] })).status).toBe(400);
    expect((await embed({ model: "emb/small", input: ["ok", ""] })).status).toBe(400);
  });

  it("sends input types and dimensions in each wire's own fields", async () => {
    await embed({ model: "emb/gemini", input: ["q"], input_type: "search_query", dimensions: 6 });
    expect(lastRequest().body).toMatchObject({ requests: [{ model: "models/ok", content: { parts: [{ text: "q" }] }, taskType: "RETRIEVAL_QUERY", outputDimensionality: 6 }] });
    const cohere = await embed({ model: "emb/cohere", input: ["doc"], input_type: "search_document", dimensions: 6, encoding_format: "base64" });
    expect(lastRequest().path).toBe("/cohere/v2/embed");
    expect(lastRequest().body).toMatchObject({ model: "ok", texts: ["doc"], input_type: "search_document", output_dimension: 6 });
    expect(decode((cohere.body.data as unknown as Array<{ embedding: string }>)[0]!.embedding)).toEqual(fakeVector("doc", 6));
    const voyage = await embed({ model: "emb/voyage", input: ["q"], input_type: "search_query" });
    expect(lastRequest().body).toMatchObject({ model: "ok", input: ["q"], input_type: "query" });
    expect(voyage.body.usage).toMatchObject({ prompt_tokens: 1 });
  });

  it("holds text parts to the endpoint's tokens per input as it holds plain text", async () => {
    const before = r.fake.requests.length;
    const parts = await embed({ model: "emb/short", input: [{ content: [{ type: "text", text: "x".repeat(60) }, { type: "text", text: "y".repeat(37) }] }] });
    expect(parts.status).toBe(400);
    expect(parts.body.error?.message).toContain("input 0 is longer than 16 tokens allow");
    expect(r.fake.requests.length).toBe(before);
  });

  it("sends input_type to OpenAI-compatible servers, and refuses it and token ids where a wire has no place for them", async () => {
    const compatible = await embed({ model: "emb/compatible", input: ["q"], input_type: "query" });
    expect(compatible.status).toBe(200);
    expect(lastRequest()).toMatchObject({ path: "/jina/embeddings", body: { model: "ok", input: ["q"], input_type: "query" } });
    const before = r.fake.requests.length;
    const tokens = await embed({ model: "emb/compatible", input: [1, 2, 3] });
    expect(tokens.status).toBe(400);
    expect(tokens.body.error?.message).toContain("no token-id input");
    const openai = await embed({ model: "emb/typed-openai", input: ["q"], input_type: "query" });
    expect(openai.status).toBe(400);
    expect(openai.body.error?.message).toContain("no input_type in the openai wire format");
    expect(r.fake.requests.length).toBe(before);
  });

  it("charges a fractional count as the next whole token, and takes no count a record cannot hold or vectors of mixed sizes", async () => {
    const half = await embed({ model: "emb/half-token", input: "abcd" });
    expect(half.status).toBe(200);
    expect(half.body.usage).toMatchObject({ prompt_tokens: 2 });
    expect((half.body.usage as { cost: number }).cost).toBeCloseTo(2 * perToken, 12);
    expect(await generation(String(half.body.id))).toMatchObject({ tokens_prompt: 2 });
    // Five trillion tokens is no answer to use: the next endpoint serves the request.
    const huge = await embed({ model: "emb/huge-usage", input: "abcd" });
    expect(huge.status).toBe(200);
    expect(huge.body.provider).toBe("gem");
    expect((huge.body.usage as { prompt_tokens: number }).prompt_tokens).toBeLessThan(10);
    const ragged = await embed({ model: "emb/ragged", input: ["a", "b"] });
    expect(ragged.status).toBe(502);
  });

  it("estimates the tokens a provider does not report, and says so on the record", async () => {
    const res = await embed({ model: "emb/nousage", input: "sixteen chars!!!" });
    expect(res.body.usage).toMatchObject({ prompt_tokens: 4 });
    expect((res.body.usage as { cost: number }).cost).toBeCloseTo(4 * perToken, 12);
    expect(await generation(String(res.body.id))).toMatchObject({ tokens_prompt: 4, tokens_completion: 0 });
  });
});

describe("guardrails on embeddings", () => {
  it("redacts what a content filter matches before the provider sees it, and refuses token ids it cannot read", async () => {
    const created = await r.gw.call("POST", "/keys", { body: { name: "filtered" } });
    const key = String(created.body.key);
    const guardrail = await r.gw.call("POST", "/guardrails", { body: { name: "no secrets", content_filters: [{ pattern: "secret-\\d+", action: "redact" }] } });
    const id = String(guardrail.body.data?.id);
    await r.gw.call("POST", `/guardrails/${id}/assignments/keys`, { body: { key_hashes: [String(created.body.data?.hash)] } });
    await eventually(async () => {
      const res = await embed({ model: "emb/small", input: ["my secret-42 here"] }, key);
      return res.status === 200 && !JSON.stringify(lastRequest().body).includes("secret-42");
    }, 5000);
    const tokens = await embed({ model: "emb/small", input: [1, 2, 3] }, key);
    expect(tokens.status).toBe(400);
    expect(tokens.body.error?.message).toContain("token ids");
  });
});

describe("presets on embeddings", () => {
  it("applies a preset's provider preferences, records the preset, and refuses one that sets what embeddings do not take", async () => {
    const saved = await r.gw.call("POST", "/presets", { body: { slug: "emb-gemini", model: "emb/fallback", provider: { ignore: ["oa"] } } });
    expect(saved.status).toBe(200);
    const presetId = String((await r.gw.call("GET", "/presets/emb-gemini")).body.data?.id);
    const before = r.fake.requests.length;
    const res = await embed({ model: "@preset/emb-gemini", input: "hello" });
    expect(res.status).toBe(200);
    expect(res.body.provider).toBe("gem");
    // The failing OpenAI endpoint the preset ignores was never tried.
    expect(r.fake.requests.slice(before).map((q) => q.path.split("/")[1])).toEqual(["gemini"]);
    expect(await generation(String(res.body.id))).toMatchObject({ preset_id: presetId, api_type: "embeddings" });
    // The request's own preferences win over the preset's.
    const own = await embed({ model: "@preset/emb-gemini", input: "hello", provider: { only: ["oa"] } });
    expect(own.status).toBe(502);

    await r.gw.call("POST", "/presets", { body: { slug: "emb-warm", model: "emb/small", temperature: 0.7 } });
    const warm = await embed({ model: "@preset/emb-warm", input: "hello" });
    expect(warm.status).toBe(400);
    expect(warm.body.error?.message).toContain("preset emb-warm sets temperature, which /embeddings does not take");
  });
});

describe("the x-session-id header on /embeddings", () => {
  it("refuses one longer than 256 characters with 400 naming it, as chat does", async () => {
    const long = await r.gw.call("POST", "/embeddings", { key: r.key, body: { model: "emb/small", input: "hello" }, headers: { "x-session-id": "s".repeat(257) } });
    expect(long.status).toBe(400);
    expect(long.body.error?.message).toContain("x-session-id");
    const kept = await r.gw.call("POST", "/embeddings", { key: r.key, body: { model: "emb/small", input: "hello" }, headers: { "x-session-id": "s".repeat(256) } });
    expect(kept.status).toBe(200);
  });
});
