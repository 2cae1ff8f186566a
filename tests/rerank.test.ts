import { OpenRouter } from "@openrouter/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fakeScore, fakeTokens } from "./support/fake-retrieval.js";
import { limitedKey, perSearchUnit, perToken, startRetrievalFixture, type RetrievalFixture } from "./support/retrieval-fixture.js";

let r: RetrievalFixture;
let sdk: OpenRouter;

beforeAll(async () => {
  r = await startRetrievalFixture();
  sdk = new OpenRouter({ apiKey: r.key, serverURL: r.gw.apiUrl, retryConfig: { strategy: "none" } });
});
afterAll(() => r.stop());

const rerank = (body: Record<string, unknown>, key = r.key) => r.gw.call("POST", "/rerank", { key, body });
const lastRequest = () => r.fake.requests.at(-1)!;
const query = "capital of France";
const documents = ["Berlin is the capital of Germany.", "Paris is the capital of France.", "Bananas are yellow."];
type Result = { index: number; relevance_score: number; document?: { text: string } };

describe("POST /rerank", () => {
  it("ranks documents best first through @openrouter/sdk, charged per Cohere search unit", async () => {
    const result = await sdk.rerank.rerank({ requestBody: { model: "rr/cohere", query, documents, topN: 2 } });
    if (typeof result === "string") throw new Error("expected JSON");
    expect(result.results.map((x) => x.index)).toEqual([1, 0]);
    expect(result.results[0]!.relevanceScore).toBe(fakeScore(query, documents[1]!));
    expect(result.results[0]!.document.text).toBe(documents[1]);
    expect(result.usage).toMatchObject({ searchUnits: 1 });
    expect(result.usage?.cost).toBeCloseTo(perSearchUnit, 12);
    const upstream = lastRequest();
    expect(upstream.path).toBe("/cohere/v2/rerank");
    expect(upstream.headers.authorization).toBe("Bearer co-secret");
    expect(upstream.body).toMatchObject({ model: "ok", query, documents, top_n: 2 });
    // Its record says what it was, as @openrouter/sdk reads it.
    const { data } = await sdk.generations.getGeneration({ id: String(result.id) });
    expect(data).toMatchObject({ apiType: "rerank", model: "rr/cohere" });
  });

  it("speaks Voyage's and the Jina-style rerank wires, charged per token, without documents when asked", async () => {
    const tokens = documents.reduce((sum, d) => sum + fakeTokens(query) + fakeTokens(d), 0);
    const voyage = await rerank({ model: "rr/voyage", query, documents, top_n: 1, return_documents: false });
    expect(voyage.status).toBe(200);
    expect(lastRequest()).toMatchObject({ path: "/voyage/rerank", body: { model: "ok", query, documents, top_k: 1 } });
    expect(voyage.body.results).toEqual([{ index: 1, relevance_score: fakeScore(query, documents[1]!) }]);
    expect(voyage.body.usage).toMatchObject({ total_tokens: tokens });
    expect((voyage.body.usage as { cost: number }).cost).toBeCloseTo(tokens * perToken, 12);
    const jina = await rerank({ model: "rr/jina", query, documents: documents.map((text) => ({ text })) });
    expect(lastRequest()).toMatchObject({ path: "/jina/rerank", body: { model: "ok", query, documents } });
    expect((jina.body.results as Result[]).map((x) => x.index)).toEqual([1, 0, 2]);
    expect((jina.body.results as Result[])[2]!.document).toEqual({ text: documents[2] });
  });

  it("falls back past a failing endpoint, and estimates what a provider does not count", async () => {
    const res = await rerank({ model: "rr/fallback", query, documents });
    expect(res.status).toBe(200);
    expect(res.body.provider).toBe("vo");
    const nousage = await rerank({ model: "rr/nousage", query: "four", documents: ["1234", "12345678"] });
    // Estimated: the query with each document, at a token per four characters.
    expect((nousage.body.usage as { cost: number }).cost).toBeCloseTo((1 + 1 + 1 + 2) * perToken, 12);
  });

  it("refuses what no endpoint can take, before a provider is called", async () => {
    const before = r.fake.requests.length;
    const over = await rerank({ model: "rr/cohere", query, documents: [...documents, "one more"] });
    expect(over.status).toBe(400);
    expect(over.body.error?.message).toContain("at most 3 documents per request, not 4");
    const image = await rerank({ model: "rr/jina", query, documents: [{ image: "https://example.com/a.png" }] });
    expect(image.status).toBe(400);
    expect(image.body.error?.message).toContain("documents.0.image");
    expect((await rerank({ model: "rr/jina", query: "", documents })).status).toBe(400);
    expect((await rerank({ model: "rr/jina", query, documents: [] })).status).toBe(400);
    expect((await rerank({ model: "emb/small", query, documents })).body.error?.message).toContain("is not a rerank model");
    expect(r.fake.requests.length).toBe(before);
  });

  it("lists rerank models under their modality for the key", async () => {
    const listed = await r.gw.call("GET", "/models/user?output_modalities=rerank", { key: r.key });
    const ids = (listed.body.data as unknown as Array<{ id: string }>).map((m) => m.id).sort();
    expect(ids).toEqual(["rr/cohere", "rr/fallback", "rr/jina", "rr/nousage", "rr/voyage"]);
    const embeddings = await r.gw.call("GET", "/models?output_modalities=embeddings", { key: r.key });
    expect((embeddings.body.data as unknown as Array<{ id: string }>).every((m) => m.id.startsWith("emb/"))).toBe(true);
  });

  it("holds the worst case of every document before the provider is called", async () => {
    const { key } = await limitedKey(r.gw, 0.000001);
    const res = await rerank({ model: "rr/voyage", query, documents }, key);
    expect(res.status).toBe(402);
    const metadata = (res.body.error as unknown as { metadata: Record<string, number> }).metadata;
    // Each document with the query at its UTF-8 length: no tokenizer yields fewer bytes per token than one.
    const bound = documents.reduce((sum, d) => sum + query.length + d.length, 0);
    expect(metadata.requested_usd).toBeCloseTo(bound * perToken, 12);
  });

  it("applies a preset's provider preferences and records the preset", async () => {
    expect((await r.gw.call("POST", "/presets", { body: { slug: "rr-voyage", model: "rr/fallback", provider: { ignore: ["ji"] } } })).status).toBe(200);
    const presetId = String((await r.gw.call("GET", "/presets/rr-voyage")).body.data?.id);
    const before = r.fake.requests.length;
    const res = await rerank({ model: "@preset/rr-voyage", query, documents });
    expect(res.status).toBe(200);
    expect(r.fake.requests.slice(before).map((q) => q.path)).toEqual(["/voyage/rerank"]);
    const { data } = await sdk.generations.getGeneration({ id: String(res.body.id) });
    expect(data).toMatchObject({ presetId, apiType: "rerank" });
  });

  it("refuses the response cache, which does not cover rerank", async () => {
    const before = r.fake.requests.length;
    const res = await r.gw.call("POST", "/rerank", { key: r.key, body: { model: "rr/voyage", query, documents }, headers: { "X-OpenRouter-Cache": "true" } });
    expect(res.status).toBe(400);
    expect(res.body.error?.message).toContain("does not cover /rerank");
    const off = await r.gw.call("POST", "/rerank", { key: r.key, body: { model: "rr/voyage", query, documents }, headers: { "X-OpenRouter-Cache": "false" } });
    expect(off.status).toBe(200);
    expect(r.fake.requests.length).toBe(before + 1);
  });
});
