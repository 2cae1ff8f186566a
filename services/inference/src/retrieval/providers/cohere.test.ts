import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EmbeddingCall, EmbeddingInput, RerankCall } from "../types.js";
import { cohereEmbeddings, cohereRerank } from "./cohere.js";
import { rejection, startFakeUpstream, targetAt, upstreamError, type FakeUpstream } from "../../../../../tests/support/recording-upstream.js";

let fake: FakeUpstream;

beforeAll(async () => {
  fake = await startFakeUpstream();
});

afterAll(() => fake.stop());

const text = (value: string): EmbeddingInput => ({ kind: "text", text: value });
const call = (inputs: EmbeddingInput[], over: Partial<EmbeddingCall> = {}): EmbeddingCall => ({ inputs, encoding: "float", options: {}, ...over });
const target = (model = "embed-v4.0") => targetAt(`${fake.origin}/`, "cohere", model);
const embed = (c: EmbeddingCall) => cohereEmbeddings.embed(c, target(), new AbortController().signal);
const embedded = (vectors: number[][], inputTokens?: number) => ({
  json: {
    id: "emb-1",
    response_type: "embeddings_by_type",
    embeddings: { float: vectors },
    texts: [],
    meta: { api_version: { version: "2" }, billed_units: inputTokens === undefined ? { images: 1 } : { input_tokens: inputTokens } },
  },
});

const rerankCall = (over: Partial<RerankCall> = {}): RerankCall => ({ query: "capital of the US?", documents: ["Carson City", "Washington, D.C.", "New York"], topN: undefined, options: {}, ...over });
const rerank = (c: RerankCall) => cohereRerank.rerank(c, target("rerank-v3.5"), new AbortController().signal);
const ranked = (results: Array<[index: number, score: number]>) => ({
  json: { id: "rr-1", results: results.map(([index, relevance_score]) => ({ index, relevance_score })), meta: { billed_units: { search_units: 1 } } },
});

describe("Cohere embeddings", () => {
  it("posts texts to {base}/v2/embed with float embeddings, search_document by default, and the key as a bearer token", async () => {
    fake.answer(embedded([[0.1, 0.2], [0.3, 0.4]], 4));
    await embed(call([text("hello"), text("goodbye")], { dimensions: 2, options: { truncate: "END", embedding_types: ["int8"] } }));
    const { path, headers, body } = fake.last();
    expect(path).toBe("/v2/embed");
    expect(headers.authorization).toBe("Bearer cohere-secret");
    expect(body).toEqual({ truncate: "END", model: "embed-v4.0", input_type: "search_document", embedding_types: ["float"], texts: ["hello", "goodbye"], output_dimension: 2 });
  });

  it.each([
    ["search_query", "search_query"],
    ["query", "search_query"],
    ["RETRIEVAL_DOCUMENT", "search_document"],
    ["classification", "classification"],
    ["CLUSTERING", "clustering"],
    ["image", "image"],
  ])("sends input type %s as %s", async (inputType, sent) => {
    fake.answer(embedded([[1]], 1));
    await embed(call([text("a")], { inputType }));
    expect(fake.last().body.input_type).toBe(sent);
  });

  it("takes the provider options' input_type when the caller gave none, the caller's over it", async () => {
    fake.answer(embedded([[1]], 1));
    await embed(call([text("a")], { options: { input_type: "clustering" } }));
    expect(fake.last().body.input_type).toBe("clustering");
    await embed(call([text("a")], { inputType: "search_query", options: { input_type: "clustering" } }));
    expect(fake.last().body.input_type).toBe("search_query");
  });

  it("sends every input as interleaved content when one has image parts", async () => {
    fake.answer(embedded([[1], [2]]));
    const image = "data:image/png;base64,iVBORw0KGgo=";
    await embed(call([text("a cat"), { kind: "parts", parts: [{ type: "text", text: "Scottish Fold" }, { type: "image", url: image }] }]));
    const { body } = fake.last();
    expect(body.texts).toBeUndefined();
    expect(body.inputs).toEqual([
      { content: [{ type: "text", text: "a cat" }] },
      { content: [{ type: "text", text: "Scottish Fold" }, { type: "image_url", image_url: { url: image } }] },
    ]);
  });

  it("refuses token ids, which the route keeps from a wire without them", async () => {
    expect(await rejection(embed(call([{ kind: "tokens", tokens: [1, 2] }])))).toBeInstanceOf(TypeError);
  });

  it("answers the float embeddings with the billed input tokens and Cohere's id, floats even when base64 was asked", async () => {
    fake.answer(embedded([[0.5, 0.25], [-1, 2]], 9));
    expect(await embed(call([text("a"), text("b")], { encoding: "base64" }))).toEqual({ vectors: [[0.5, 0.25], [-1, 2]], promptTokens: 9, upstreamId: "emb-1", verbatim: false });
    expect(fake.last().body.embedding_types).toEqual(["float"]);
  });

  it("reports no tokens when Cohere billed none (an image-only input)", async () => {
    fake.answer(embedded([[1]]));
    expect((await embed(call([{ kind: "parts", parts: [{ type: "image", url: "data:image/png;base64,AA==" }] }]))).promptTokens).toBeUndefined();
  });

  it.each([
    ["no float embeddings", { json: { id: "x", embeddings: { int8: [[1]] } } }, "embeddings.float"],
    ["fewer vectors than inputs", embedded([[1]], 1), "1 vectors for 2 inputs"],
    ["not JSON", { raw: "oops" }, "answered unusable embeddings"],
  ])("refuses an answer with %s as a retryable 502", async (_, reply, message) => {
    fake.answer(reply);
    const error = await upstreamError(embed(call([text("a"), text("b")])));
    expect([error.status, error.retryable]).toEqual([502, true]);
    expect(error.message).toContain(message);
  });

  it("refuses vectors of another size than the output_dimension asked", async () => {
    fake.answer(embedded([[1, 2]], 1));
    expect((await upstreamError(embed(call([text("a")], { dimensions: 256 })))).message).toContain("2 dimensions where 256 were asked");
  });
});

describe("Cohere rerank", () => {
  it("posts the query, documents and top_n to {base}/v2/rerank", async () => {
    fake.answer(ranked([[1, 0.9], [0, 0.1]]));
    await rerank(rerankCall({ topN: 2, options: { max_tokens_per_doc: 512, query: "ignored" } }));
    const { path, headers, body } = fake.last();
    expect(path).toBe("/v2/rerank");
    expect(headers.authorization).toBe("Bearer cohere-secret");
    expect(body).toEqual({ max_tokens_per_doc: 512, model: "rerank-v3.5", query: "capital of the US?", documents: ["Carson City", "Washington, D.C.", "New York"], top_n: 2 });
  });

  it("leaves top_n out when all documents are wanted", async () => {
    fake.answer(ranked([[0, 0.1]]));
    await rerank(rerankCall({ documents: ["only"] }));
    expect(fake.last().body).not.toHaveProperty("top_n");
  });

  it("answers results best first with the billed search units and Cohere's id", async () => {
    fake.answer(ranked([[2, 0.2], [1, 0.95], [0, 0.01]]));
    expect(await rerank(rerankCall())).toEqual({
      results: [
        { index: 1, score: 0.95 },
        { index: 2, score: 0.2 },
        { index: 0, score: 0.01 },
      ],
      totalTokens: undefined,
      searchUnits: 1,
      upstreamId: "rr-1",
    });
  });

  it.each([
    ["an index out of range", ranked([[3, 0.5]]), "index 3 for 3 documents"],
    ["a negative index", ranked([[-1, 0.5]]), "index -1 for 3 documents"],
    ["an index twice", ranked([[1, 0.5], [1, 0.4]]), "index 1 twice"],
    ["a fractional index", ranked([[0.5, 0.5]]), "results.0.index"],
    ["no results", { json: { id: "x" } }, "results"],
  ])("refuses an answer with %s as a retryable 502", async (_, reply, message) => {
    fake.answer(reply);
    const error = await upstreamError(rerank(rerankCall()));
    expect([error.status, error.retryable]).toEqual([502, true]);
    expect(error.message).toContain(message);
  });

  it("passes Cohere's error statuses on", async () => {
    fake.answer({ status: 422, json: { message: "too many documents" } });
    const error = await upstreamError(rerank(rerankCall()));
    expect([error.status, error.retryable]).toEqual([422, false]);
  });
});
