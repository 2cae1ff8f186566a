import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RerankCall } from "../types.js";
import { startFakeUpstream, targetAt, upstreamError, type FakeUpstream } from "../../../../../tests/support/recording-upstream.js";
import { jinaRerank } from "./jina.js";

let fake: FakeUpstream;

beforeAll(async () => {
  fake = await startFakeUpstream();
});

afterAll(() => fake.stop());

const rerankCall = (over: Partial<RerankCall> = {}): RerankCall => ({ query: "organic skincare", documents: ["green tea lotion", "car tyres", "aloe gel"], topN: undefined, options: {}, ...over });
const target = (keyed = true) => targetAt(`${fake.origin}/v1/`, "jina", "jina-reranker-v2-base-multilingual", keyed);
const rerank = (c: RerankCall, t = target()) => jinaRerank.rerank(c, t, new AbortController().signal);
const results = (items: Array<[index: number, score: number]>) => items.map(([index, relevance_score]) => ({ index, relevance_score }));

describe("Jina-style rerank", () => {
  it("posts the query, documents and top_n to {base}/rerank without documents echoed back, with the key as a bearer token", async () => {
    fake.answer({ json: { model: "jina-reranker-v2-base-multilingual", usage: { total_tokens: 15 }, results: results([[0, 0.8]]) } });
    await rerank(rerankCall({ topN: 1, options: { return_documents: true, truncation: true } }));
    const { path, headers, body } = fake.last();
    expect(path).toBe("/v1/rerank");
    expect(headers.authorization).toBe("Bearer jina-secret");
    expect(body).toEqual({ return_documents: false, truncation: true, model: "jina-reranker-v2-base-multilingual", query: "organic skincare", documents: ["green tea lotion", "car tyres", "aloe gel"], top_n: 1 });
  });

  it("sends no top_n when all documents are wanted, and no authorization to a server without a key", async () => {
    fake.answer({ json: { results: results([[0, 0.8]]) } });
    await rerank(rerankCall(), target(false));
    expect(fake.last().body).not.toHaveProperty("top_n");
    expect(fake.last().headers.authorization).toBeUndefined();
  });

  it("answers Jina's results best first with its token count", async () => {
    fake.answer({ json: { model: "m", usage: { total_tokens: 42 }, results: results([[2, 0.4], [0, 0.9], [1, 0.01]]) } });
    expect(await rerank(rerankCall())).toEqual({
      results: [
        { index: 0, score: 0.9 },
        { index: 2, score: 0.4 },
        { index: 1, score: 0.01 },
      ],
      totalTokens: 42,
      searchUnits: undefined,
      upstreamId: null,
    });
  });

  it("reads vLLM's id, documents echoed anyway, and negative raw scores", async () => {
    const echoed = [
      { index: 1, document: { text: "car tyres" }, relevance_score: -3.5 },
      { index: 0, document: { text: "green tea lotion" }, relevance_score: 2.25 },
    ];
    fake.answer({ json: { id: "rerank-abc", model: "BAAI/bge-reranker-base", usage: { total_tokens: 20 }, results: echoed } });
    const answer = await rerank(rerankCall({ topN: 2 }));
    expect(answer.results).toEqual([
      { index: 0, score: 2.25 },
      { index: 1, score: -3.5 },
    ]);
    expect(answer.upstreamId).toBe("rerank-abc");
  });

  it("reports no tokens when the server has no usage", async () => {
    fake.answer({ json: { results: results([[0, 0.5]]) } });
    expect((await rerank(rerankCall())).totalTokens).toBeUndefined();
  });

  it.each([
    ["TEI's bare list", { json: [{ index: 0, score: 0.9 }] }, "answered unusable rerank results"],
    ["a score that is not a number", { json: { results: [{ index: 0, relevance_score: "high" }] } }, "results.0.relevance_score"],
    ["an index twice", { json: { results: results([[2, 0.5], [2, 0.4]]) } }, "index 2 twice"],
    ["an index out of range", { json: { results: results([[3, 0.5]]) } }, "index 3 for 3 documents"],
  ])("refuses an answer with %s as a retryable 502", async (_, reply, message) => {
    fake.answer(reply);
    const error = await upstreamError(rerank(rerankCall()));
    expect([error.status, error.retryable]).toEqual([502, true]);
    expect(error.message).toContain(message);
  });

  it("passes error statuses on", async () => {
    fake.answer({ status: 500, json: { detail: "model crashed" } });
    const error = await upstreamError(rerank(rerankCall()));
    expect([error.status, error.retryable]).toEqual([500, true]);
    fake.answer({ status: 401, json: { detail: "bad key" } });
    expect((await upstreamError(rerank(rerankCall()))).retryable).toBe(false);
  });
});
