import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { incompleteAnswer, loadRequest } from "./chat-load.js";
import { embeddingInputs } from "./embedding-inputs.js";
import { embeddingTokensPerInput } from "./fake-embeddings.js";
import { startFakeUpstream } from "./fake-upstream.js";

/** An answer as one chunk of bytes. */
const bytes = (text: string) => [Buffer.from(text)];

interface EmbeddingsAnswer {
  object: string;
  model: string;
  data: Array<{ object: string; index: number; embedding: string | number[] }>;
  usage: { prompt_tokens: number; total_tokens: number };
}

let upstream: { url: string; close(): void };
beforeAll(async () => {
  upstream = await startFakeUpstream();
});
afterAll(() => upstream.close());

async function embed(body: object): Promise<{ status: number; headers: Headers; text: string; answer: EmbeddingsAnswer }> {
  const res = await fetch(`${upstream.url}/embeddings`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, answer: JSON.parse(text) as EmbeddingsAnswer };
}

/** A base64 vector as OpenAI encodes it (little-endian float32) read back as numbers. */
function floatsOf(base64: string): number[] {
  const bytes = Buffer.from(base64, "base64");
  expect(bytes.length % 4).toBe(0);
  return Array.from({ length: bytes.length / 4 }, (_, i) => bytes.readFloatLE(i * 4));
}

const norm = (vector: number[]) => Math.hypot(...vector);

describe("the fake upstream's embeddings", () => {
  it("answers the benchmark's 16 passages with 16 base64 vectors of 1536 values, in input order, and their usage", async () => {
    const { status, headers, text, answer } = await embed({ model: "bench", input: embeddingInputs, encoding_format: "base64" });
    expect(status).toBe(200);
    expect(headers.get("content-type")).toBe("application/json");
    expect(Number(headers.get("content-length"))).toBe(Buffer.byteLength(text));
    expect(answer.object).toBe("list");
    expect(answer.model).toBe("bench");
    expect(answer.data.map((d) => [d.object, d.index])).toEqual(embeddingInputs.map((_, i) => ["embedding", i]));
    const vectors = answer.data.map((d) => floatsOf(d.embedding as string));
    for (const vector of vectors) {
      expect(vector).toHaveLength(1536);
      expect(norm(vector)).toBeCloseTo(1, 5);
    }
    expect(new Set(answer.data.map((d) => d.embedding)).size).toBe(16);
    expect(answer.usage).toEqual({ prompt_tokens: 1632, total_tokens: 1632 });
    expect(embeddingTokensPerInput * 16).toBe(1632);
    expect(incompleteAnswer("embeddings", false, bytes(text))).toBeUndefined();
  });

  it("answers floats when base64 is not asked for, the same vectors", async () => {
    const base64 = (await embed({ model: "bench", input: embeddingInputs, encoding_format: "base64" })).answer;
    const floats = (await embed({ model: "bench", input: embeddingInputs })).answer;
    expect((await embed({ model: "bench", input: embeddingInputs, encoding_format: "float" })).answer).toEqual(floats);
    expect(floats.data).toHaveLength(16);
    floats.data.forEach((d, i) => {
      expect(Array.isArray(d.embedding)).toBe(true);
      expect(d.embedding).toEqual(floatsOf(base64.data[i]!.embedding as string));
    });
    expect(floats.usage).toEqual(base64.usage);
  });

  it("answers one vector per input whatever their number, and one for a string input", async () => {
    const three = (await embed({ model: "bench", input: embeddingInputs.slice(0, 3), encoding_format: "base64" })).answer;
    expect(three.data.map((d) => d.index)).toEqual([0, 1, 2]);
    expect(three.usage).toEqual({ prompt_tokens: 3 * embeddingTokensPerInput, total_tokens: 3 * embeddingTokensPerInput });
    const twenty = (await embed({ model: "bench", input: [...embeddingInputs, ...embeddingInputs.slice(0, 4)], encoding_format: "base64" })).answer;
    expect(twenty.data.map((d) => d.index)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(twenty.data[16]!.embedding).toBe(twenty.data[0]!.embedding);
    const one = (await embed({ model: "bench", input: "a single passage" })).answer;
    expect(one.data).toHaveLength(1);
    expect(one.data[0]!.embedding).toHaveLength(1536);
  });

  it("still answers chat completions on the other paths", async () => {
    const res = await fetch(`${upstream.url}/chat/completions`, { method: "POST", body: JSON.stringify({ model: "bench", messages: [] }) });
    expect(incompleteAnswer("chat", false, bytes(await res.text()))).toBeUndefined();
  });
});

describe("the fake upstream's chat completions", () => {
  const direct = { origin: "", headers: {}, routes: { chat: { path: "/v1/chat/completions", model: "bench" } } };

  it.each([false, true])("reads a large conversation's whole body and answers it whole (stream %s)", async (stream) => {
    for (const size of ["64k", "256k"] as const) {
      const { body } = loadRequest(direct, "chat", stream, size);
      expect(Buffer.byteLength(body)).toBeGreaterThan(60 * 1024);
      const res = await fetch(`${upstream.url}/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body });
      expect(res.status).toBe(200);
      expect(incompleteAnswer("chat", stream, bytes(await res.text()))).toBeUndefined();
    }
  });
});
