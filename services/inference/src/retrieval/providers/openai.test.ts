import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EmbeddingCall, EmbeddingInput } from "../types.js";
import { rejection, startFakeUpstream, targetAt, upstreamError, type FakeUpstream } from "../../../../../tests/support/recording-upstream.js";
import { openAiEmbeddings } from "./openai.js";
import { toBase64 } from "./vectors.js";

let fake: FakeUpstream;

beforeAll(async () => {
  fake = await startFakeUpstream();
});

afterAll(() => fake.stop());

const text = (value: string): EmbeddingInput => ({ kind: "text", text: value });
const tokens = (...ids: number[]): EmbeddingInput => ({ kind: "tokens", tokens: ids });
const call = (inputs: EmbeddingInput[], over: Partial<EmbeddingCall> = {}): EmbeddingCall => ({ inputs, encoding: "float", options: {}, ...over });
const target = (keyed = true) => targetAt(`${fake.origin}/v1/`, "openai", "text-embedding-3-small", keyed);
const embed = (c: EmbeddingCall, t = target(), signal = new AbortController().signal) => openAiEmbeddings.embed(c, t, signal);

/** OpenAI's answer for vectors, listed in the order given with their `index`. */
const list = (items: Array<[index: number, embedding: unknown]>, promptTokens = 7) => ({
  object: "list",
  data: items.map(([index, embedding]) => ({ object: "embedding", index, embedding })),
  model: "text-embedding-3-small",
  usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
});

describe("OpenAI embeddings, request", () => {
  it("posts the inputs, model, encoding, dimensions and user to {base}/embeddings with the key as a bearer token", async () => {
    fake.answer({ json: list([[0, [0.1]], [1, [0.2]]]) });
    await embed(call([text("hello"), text("world")], { dimensions: 1, user: "user-hash", options: { model: "ignored", encoding_format: "base64", extra: true } }));
    const { path, headers, body } = fake.last();
    expect(path).toBe("/v1/embeddings");
    expect(headers.authorization).toBe("Bearer openai-secret");
    expect(headers["content-type"]).toBe("application/json");
    expect(body).toEqual({ extra: true, model: "text-embedding-3-small", input: ["hello", "world"], encoding_format: "float", dimensions: 1, user: "user-hash" });
  });

  it("leaves out dimensions and user when the call has none, and the authorization header when the endpoint has no key", async () => {
    fake.answer({ json: list([[0, [0.1]]]) });
    await embed(call([text("hello")]), target(false));
    expect(fake.last().body).toEqual({ model: "text-embedding-3-small", input: ["hello"], encoding_format: "float" });
    expect(fake.last().headers.authorization).toBeUndefined();
  });

  it("sends token ids as arrays of token arrays, and text-only parts as their text joined by newlines", async () => {
    fake.answer({ json: list([[0, [0.1]], [1, [0.2]]]) });
    await embed(call([tokens(1, 2, 3), tokens(4)]));
    expect(fake.last().body.input).toEqual([[1, 2, 3], [4]]);
    await embed(call([text("a"), { kind: "parts", parts: [{ type: "text", text: "b" }, { type: "text", text: "c" }] }]));
    expect(fake.last().body.input).toEqual(["a", "b\nc"]);
  });

  it("refuses image parts, which the route keeps from a wire without images", async () => {
    const error = await rejection(embed(call([{ kind: "parts", parts: [{ type: "image", url: "https://example.com/cat.png" }] }])));
    expect(error).toBeInstanceOf(TypeError);
  });
});

describe("OpenAI embeddings, answer", () => {
  it("places vectors by index when data comes out of order, with the prompt tokens and id", async () => {
    fake.answer({ json: { ...list([[2, [3, 3]], [0, [1, 1]], [1, [2, 2]]], 11), id: "gen-123" } });
    const answer = await embed(call([text("a"), text("b"), text("c")]));
    expect(answer).toEqual({ vectors: [[1, 1], [2, 2], [3, 3]], promptTokens: 11, upstreamId: "gen-123", verbatim: true });
  });

  it("takes vectors in order when no item has an index, and reports no tokens when usage is missing", async () => {
    fake.answer({ json: { data: [{ embedding: [1] }, { embedding: [2] }] } });
    expect(await embed(call([text("a"), text("b")]))).toEqual({ vectors: [[1], [2]], promptTokens: undefined, upstreamId: null, verbatim: true });
  });

  it("asks for base64 when the client did and returns OpenAI's strings as sent", async () => {
    const first = Buffer.from(new Float32Array([0.25, -1.5]).buffer).toString("base64");
    const second = toBase64([2, 4]);
    fake.answer({ json: list([[1, second], [0, first]]) });
    const answer = await embed(call([text("a"), text("b")], { encoding: "base64", dimensions: 2 }));
    expect(fake.last().body.encoding_format).toBe("base64");
    expect(answer.vectors).toEqual([first, second]);
  });

  it("accepts floats from a server that ignores encoding_format", async () => {
    fake.answer({ json: list([[0, [0.5, 0.25]]]) });
    expect((await embed(call([text("a")], { encoding: "base64" }))).vectors).toEqual([[0.5, 0.25]]);
  });

  it.each([
    ["not JSON", { raw: "<html>bad gateway</html>" }, "answered unusable embeddings"],
    ["no data", { json: { object: "list" } }, "data"],
    ["a vector that is not numbers", { json: list([[0, ["x"]], [1, [1]]]) }, "vector of numbers"],
    ["base64 that is not float32", { json: list([[0, "AAA="], [1, [1]]]) }, "base64"],
    ["fewer vectors than inputs", { json: list([[0, [1]]]) }, "no vector for input 1"],
    ["an index twice", { json: list([[0, [1]], [0, [2]]]) }, "index 0 twice"],
    ["an index out of range", { json: list([[0, [1]], [2, [2]]]) }, "index 2 for 2 inputs"],
    ["some items without an index", { json: { data: [{ index: 0, embedding: [1] }, { embedding: [2] }] } }, "some vectors have an index"],
  ])("refuses an answer with %s as a retryable 502", async (_, reply, message) => {
    fake.answer(reply);
    const error = await upstreamError(embed(call([text("a"), text("b")])));
    expect(error.status).toBe(502);
    expect(error.retryable).toBe(true);
    expect(error.message).toContain(message);
  });

  it("refuses vectors of another size than the dimensions asked", async () => {
    fake.answer({ json: list([[0, [1, 2, 3]]]) });
    const error = await upstreamError(embed(call([text("a")], { dimensions: 2 })));
    expect([error.status, error.message]).toEqual([502, expect.stringContaining("3 dimensions where 2 were asked")]);
  });

  it("passes error statuses on as UpstreamErrors that say whether another endpoint may be tried", async () => {
    fake.answer({ status: 429, headers: { "retry-after": "3" }, json: { error: { message: "slow down" } } });
    const limited = await upstreamError(embed(call([text("a")])));
    expect([limited.status, limited.retryable, limited.retryAfterMs]).toEqual([429, true, 3000]);
    fake.answer({ status: 400, json: { error: { message: "input too long" } } });
    const refused = await upstreamError(embed(call([text("a")])));
    expect([refused.status, refused.retryable]).toEqual([400, false]);
    expect(refused.message).toContain("input too long");
  });
});
