import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EmbeddingCall } from "../types.js";
import { startFakeUpstream, targetAt, upstreamError, type FakeUpstream } from "../../../../../tests/support/recording-upstream.js";
import { googleEmbeddings } from "./google.js";

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
const target = (model = "gemini-embedding-001", keyed = true) => targetAt(`${fake.origin}/v1beta`, "google-ai-studio", model, keyed);
const embed = (c: EmbeddingCall, t = target()) => googleEmbeddings.embed(c, t, new AbortController().signal);
const answer = (...vectors: unknown[]) => ({ json: { embeddings: vectors.map((values) => ({ values })) } });

describe("Gemini embeddings", () => {
  it("posts one EmbedContentRequest per input to {base}/models/{model}:batchEmbedContents with the key in x-goog-api-key", async () => {
    fake.answer(answer([0.1, 0.2], [0.3, 0.4]));
    await embed(call(["What is the meaning of life?", "How does the brain work?"], { dimensions: 2, inputType: "search_query", user: "not-sent" }));
    const { path, headers, body } = fake.last();
    expect(path).toBe("/v1beta/models/gemini-embedding-001:batchEmbedContents");
    expect(headers["x-goog-api-key"]).toBe("google-ai-studio-secret");
    expect(headers.authorization).toBeUndefined();
    expect(body).toEqual({
      requests: [
        { model: "models/gemini-embedding-001", content: { parts: [{ text: "What is the meaning of life?" }] }, taskType: "RETRIEVAL_QUERY", outputDimensionality: 2 },
        { model: "models/gemini-embedding-001", content: { parts: [{ text: "How does the brain work?" }] }, taskType: "RETRIEVAL_QUERY", outputDimensionality: 2 },
      ],
    });
  });

  it("takes a model named with its models/ prefix, and sends no key header for an endpoint without a key", async () => {
    fake.answer(answer([1]));
    await embed(call(["a"]), target("models/text-embedding-004", false));
    expect(fake.last().path).toBe("/v1beta/models/text-embedding-004:batchEmbedContents");
    expect(fake.last().headers["x-goog-api-key"]).toBeUndefined();
    expect(fake.last().body).toEqual({ requests: [{ model: "models/text-embedding-004", content: { parts: [{ text: "a" }] } }] });
  });

  it.each([
    ["search_document", "RETRIEVAL_DOCUMENT"],
    ["classification", "CLASSIFICATION"],
    ["clustering", "CLUSTERING"],
    ["query", "RETRIEVAL_QUERY"],
    ["RETRIEVAL_DOCUMENT", "RETRIEVAL_DOCUMENT"],
    ["SEMANTIC_SIMILARITY", "SEMANTIC_SIMILARITY"],
    ["CODE_RETRIEVAL_QUERY", "CODE_RETRIEVAL_QUERY"],
    ["FACT_VERIFICATION", "FACT_VERIFICATION"],
  ])("sends input type %s as task type %s", async (inputType, taskType) => {
    fake.answer(answer([1]));
    await embed(call(["a"], { inputType }));
    expect((fake.last().body.requests as Array<Record<string, unknown>>)[0]!.taskType).toBe(taskType);
  });

  it("puts provider options into each request, under the call's own fields", async () => {
    fake.answer(answer([1], [2]));
    await embed(call(["a", "b"], { inputType: "search_document", options: { title: "Handbook", taskType: "CLUSTERING", model: "models/other" } }));
    const requests = fake.last().body.requests as Array<Record<string, unknown>>;
    expect(requests.map((r) => [r.title, r.taskType, r.model])).toEqual([
      ["Handbook", "RETRIEVAL_DOCUMENT", "models/gemini-embedding-001"],
      ["Handbook", "RETRIEVAL_DOCUMENT", "models/gemini-embedding-001"],
    ]);
  });

  it("embeds text-only parts as their joined text", async () => {
    fake.answer(answer([1]));
    await embed({ inputs: [{ kind: "parts", parts: [{ type: "text", text: "title" }, { type: "text", text: "body" }] }], encoding: "float", options: {} });
    expect((fake.last().body.requests as Array<{ content: unknown }>)[0]!.content).toEqual({ parts: [{ text: "title\nbody" }] });
  });

  it("answers the values in request order as floats, with no token count or id, even when base64 was asked", async () => {
    fake.answer(answer([0.5, -0.5], [0.25, 0.75]));
    expect(await embed(call(["a", "b"], { encoding: "base64" }))).toEqual({ vectors: [[0.5, -0.5], [0.25, 0.75]], promptTokens: undefined, upstreamId: null, verbatim: false });
  });

  it.each([
    ["not JSON", { raw: "upstream proxy error" }, "answered unusable embeddings"],
    ["no embeddings", { json: {} }, "embeddings"],
    ["values that are not numbers", answer(["x"], [1]), "vector of numbers"],
    ["fewer vectors than inputs", answer([1]), "1 vectors for 2 inputs"],
  ])("refuses an answer with %s as a retryable 502", async (_, reply, message) => {
    fake.answer(reply);
    const error = await upstreamError(embed(call(["a", "b"])));
    expect([error.status, error.retryable]).toEqual([502, true]);
    expect(error.message).toContain(message);
  });

  it("refuses vectors of another size than the outputDimensionality asked", async () => {
    fake.answer(answer([1, 2, 3]));
    const error = await upstreamError(embed(call(["a"], { dimensions: 768 })));
    expect(error.message).toContain("3 dimensions where 768 were asked");
  });

  it("passes Gemini's error statuses on", async () => {
    fake.answer({ status: 400, json: { error: { code: 400, message: "API key not valid", status: "INVALID_ARGUMENT" } } });
    const error = await upstreamError(embed(call(["a"])));
    expect([error.status, error.retryable]).toEqual([400, false]);
    expect(error.message).toContain("API key not valid");
    fake.answer({ status: 503, json: { error: { code: 503, message: "overloaded" } } });
    expect((await upstreamError(embed(call(["a"])))).retryable).toBe(true);
  });
});
