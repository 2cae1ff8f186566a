import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "./support/eventually.js";
import { fakeVector } from "./support/fake-retrieval.js";
import { startRetrievalFixture, type RetrievalFixture } from "./support/retrieval-fixture.js";

let r: RetrievalFixture;
let openai: OpenAI;

const cached = { "X-OpenRouter-Cache": "true" };

beforeAll(async () => {
  r = await startRetrievalFixture();
  openai = new OpenAI({ apiKey: r.key, baseURL: r.gw.apiUrl, maxRetries: 0, defaultHeaders: cached });
});
afterAll(() => r.stop());

const calls = () => r.fake.requests.length;

describe("response cache, embeddings", () => {
  it("answers repeated embeddings from the cache in the encoding asked, at no cost, as its own generation", async () => {
    const input = ["cache me", "and me"];
    const first = await openai.embeddings.create({ model: "emb/small", input, encoding_format: "float" }).withResponse();
    expect(first.response.headers.get("x-openrouter-cache-status")).toBe("MISS");
    const before = calls();
    const floats = await openai.embeddings.create({ model: "emb/small", input, encoding_format: "float" }).withResponse();
    expect(calls()).toBe(before);
    expect(floats.response.headers.get("x-openrouter-cache-status")).toBe("HIT");
    expect(floats.data.data.map((d) => d.embedding)).toEqual(input.map((i) => fakeVector(i)));
    expect(floats.data.usage).toMatchObject({ prompt_tokens: 0, total_tokens: 0, cost: 0 });
    const id = floats.response.headers.get("x-generation-id")!;
    expect(id).not.toBe(first.response.headers.get("x-generation-id"));
    await eventually(async () => (await r.gw.call("GET", `/generation?id=${id}`, { key: r.key })).status === 200, 5000);
    const record = (await r.gw.call("GET", `/generation?id=${id}`, { key: r.key })).body.data;
    expect(record).toMatchObject({ api_type: "embeddings", total_cost: 0, tokens_prompt: 0, cache_source_id: first.response.headers.get("x-generation-id") });

    // The SDK's default base64 is another request; its own hit decodes to the same vectors.
    await openai.embeddings.create({ model: "emb/small", input });
    const mid = calls();
    const base64 = await openai.embeddings.create({ model: "emb/small", input }).withResponse();
    expect(base64.response.headers.get("x-openrouter-cache-status")).toBe("HIT");
    expect(calls()).toBe(mid);
    expect(base64.data.data.map((d) => d.embedding)).toEqual(input.map((i) => fakeVector(i)));
  });

  it("misses once a preset's new version changes what the provider gets", async () => {
    const slug = `emb-dims-${Date.now()}`;
    expect((await r.gw.call("POST", "/presets", { body: { slug, model: "emb/small", dimensions: 3 } })).status).toBeLessThan(300);
    const ask = () => openai.embeddings.create({ model: `@preset/${slug}`, input: "hello dims", encoding_format: "float" }).withResponse();
    expect((await ask()).response.headers.get("x-openrouter-cache-status")).toBe("MISS");
    expect((await r.gw.call("POST", "/presets", { body: { slug, model: "emb/small", dimensions: 8 } })).status).toBeLessThan(300);
    const before = calls();
    const next = await ask();
    expect(next.response.headers.get("x-openrouter-cache-status")).toBe("MISS");
    expect(calls()).toBe(before + 1);
    expect(next.data.data[0]!.embedding).toHaveLength(8);
  });

  it("misses for other inputs", async () => {
    await openai.embeddings.create({ model: "emb/small", input: "one text", encoding_format: "float" });
    const before = calls();
    const other = await openai.embeddings.create({ model: "emb/small", input: "another text", encoding_format: "float" }).withResponse();
    expect(other.response.headers.get("x-openrouter-cache-status")).toBe("MISS");
    expect(calls()).toBe(before + 1);
  });
});
