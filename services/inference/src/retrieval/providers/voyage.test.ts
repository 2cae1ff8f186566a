import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EmbeddingCall, RerankCall } from "../types.js";
import { startFakeUpstream, targetAt, upstreamError, type FakeUpstream } from "../../../../../tests/support/recording-upstream.js";
import { toBase64, toFloats } from "./vectors.js";
import { voyageEmbeddings, voyageRerank } from "./voyage.js";

let fake: FakeUpstream;

beforeAll(async () => {
  fake = await startFakeUpstream();
});

afterAll(() => fake.stop());

const call = (texts: string[], over: Partial<EmbeddingCall> = {}): EmbeddingCall => ({
  inputs: texts.map((text) => ({ kind: "text", text })),
  encoding: "float",
  options: {},
  ...over,
});
const target = (model: string) => targetAt(`${fake.origin}/v1`, "voyage", model);
const embed = (c: EmbeddingCall) => voyageEmbeddings.embed(c, target("voyage-3.5"), new AbortController().signal);
const list = (items: Array<[index: number, embedding: number[] | string]>, totalTokens = 8) => ({
  json: { object: "list", data: items.map(([index, embedding]) => ({ object: "embedding", embedding, index })), model: "voyage-3.5", usage: { total_tokens: totalTokens } },
});

const rerankCall = (over: Partial<RerankCall> = {}): RerankCall => ({ query: "rain?", documents: ["sunny beach", "rainy city", "snow"], topN: undefined, options: {}, ...over });
const rerank = (c: RerankCall) => voyageRerank.rerank(c, target("rerank-2.5"), new AbortController().signal);
const ranked = (results: Array<[index: number, score: number]>, totalTokens = 26) => ({
  json: { object: "list", data: results.map(([index, relevance_score]) => ({ relevance_score, index })), model: "rerank-2.5", usage: { total_tokens: totalTokens } },
});

describe("Voyage embeddings", () => {
  it("posts the texts to {base}/embeddings with float32 output, the input type and dimension, and the key as a bearer token", async () => {
    fake.answer(list([[0, [0.1, 0.2]]]));
    await embed(call(["Sample text"], { inputType: "search_query", dimensions: 2, options: { truncation: false, output_dtype: "int8" } }));
    const { path, headers, body } = fake.last();
    expect(path).toBe("/v1/embeddings");
    expect(headers.authorization).toBe("Bearer voyage-secret");
    expect(body).toEqual({ truncation: false, model: "voyage-3.5", input: ["Sample text"], input_type: "query", output_dimension: 2, output_dtype: "float", encoding_format: null });
  });

  it.each([
    ["search_document", "document"],
    ["RETRIEVAL_QUERY", "query"],
    ["classification", null],
    ["clustering", null],
    ["semantic_similarity", null],
  ])("sends input type %s as %s", async (inputType, sent) => {
    fake.answer(list([[0, [1]]]));
    await embed(call(["a"], { inputType }));
    expect(fake.last().body.input_type).toBe(sent);
  });

  it("leaves input_type to the provider options when the caller gave none", async () => {
    fake.answer(list([[0, [1]]]));
    await embed(call(["a"]));
    expect(fake.last().body).not.toHaveProperty("input_type");
    await embed(call(["a"], { options: { input_type: "document" } }));
    expect(fake.last().body.input_type).toBe("document");
  });

  it("places vectors by index with the total tokens, and no id", async () => {
    fake.answer(list([[1, [2]], [0, [1]]], 12));
    expect(await embed(call(["a", "b"]))).toEqual({ vectors: [[1], [2]], promptTokens: 12, upstreamId: null, verbatim: true });
  });

  it("asks for base64 when the client did and returns Voyage's NumPy float32 bytes as sent", async () => {
    const vector = [0.016709786, -0.027496673, 0.5];
    const numpy = Buffer.from(new Float32Array(vector).buffer).toString("base64");
    fake.answer(list([[0, numpy]]));
    const answer = await embed(call(["a"], { encoding: "base64", dimensions: 3 }));
    expect(fake.last().body.encoding_format).toBe("base64");
    expect(answer.vectors).toEqual([numpy]);
    expect(toFloats(numpy)).toEqual(vector.map(Math.fround));
    expect(toBase64(toFloats(numpy))).toBe(numpy);
  });

  it.each([
    ["no data", { json: { object: "list" } }, "data"],
    ["fewer vectors than inputs", list([[0, [1]]]), "no vector for input 1"],
    ["base64 that is not float32", list([[0, "AAA="], [1, [1]]]), "base64"],
  ])("refuses an answer with %s as a retryable 502", async (_, reply, message) => {
    fake.answer(reply);
    const error = await upstreamError(embed(call(["a", "b"])));
    expect([error.status, error.retryable]).toEqual([502, true]);
    expect(error.message).toContain(message);
  });

  it("passes Voyage's error statuses on", async () => {
    fake.answer({ status: 400, json: { detail: "input_type must be query or document" } });
    const error = await upstreamError(embed(call(["a"], { inputType: "weird" })));
    expect(fake.last().body.input_type).toBe("weird");
    expect([error.status, error.retryable]).toEqual([400, false]);
    expect(error.message).toContain("input_type must be query or document");
  });
});

describe("Voyage rerank", () => {
  it("posts the query, documents and top_k to {base}/rerank without documents echoed back", async () => {
    fake.answer(ranked([[1, 0.8]]));
    await rerank(rerankCall({ topN: 1, options: { truncation: false, return_documents: true } }));
    const { path, body } = fake.last();
    expect(path).toBe("/v1/rerank");
    expect(body).toEqual({ truncation: false, model: "rerank-2.5", query: "rain?", documents: ["sunny beach", "rainy city", "snow"], top_k: 1, return_documents: false });
  });

  it("answers results best first with Voyage's token count", async () => {
    fake.answer(ranked([[0, 0.3], [2, 0.05], [1, 0.9]], 31));
    expect(await rerank(rerankCall())).toEqual({
      results: [
        { index: 1, score: 0.9 },
        { index: 0, score: 0.3 },
        { index: 2, score: 0.05 },
      ],
      totalTokens: 31,
      searchUnits: undefined,
      upstreamId: null,
    });
  });

  it("keeps only the top_k best when the server sends more", async () => {
    fake.answer(ranked([[0, 0.3], [2, 0.05], [1, 0.9]]));
    expect((await rerank(rerankCall({ topN: 2 }))).results).toEqual([
      { index: 1, score: 0.9 },
      { index: 0, score: 0.3 },
    ]);
  });

  it("refuses results whose index is not one of the documents' as a retryable 502", async () => {
    fake.answer(ranked([[5, 0.3]]));
    const error = await upstreamError(rerank(rerankCall()));
    expect([error.status, error.retryable, error.message]).toEqual([502, true, expect.stringContaining("index 5 for 3 documents")]);
  });
});
