import { EventEmitter } from "node:events";
import type { ServerResponse } from "node:http";
import { describe, expect, it } from "vitest";
import { sendEmbeddings } from "./answer.js";
import { toBase64 } from "./providers/vectors.js";

/** A response that keeps what `end` got, and finishes when told to, as a socket that took the bytes would. */
class Response extends EventEmitter {
  statusCode = 0;
  readonly headers: Record<string, unknown> = {};
  body: Buffer | undefined;
  setHeader(name: string, value: unknown) {
    this.headers[name.toLowerCase()] = value;
  }
  end(body: Buffer) {
    this.body = body;
  }
}

const envelope = { id: "gen-1", model: "m", provider: "p", usage: { prompt_tokens: 2, total_tokens: 2, cost: 0.5, is_byok: false } };
const vectorsOf = (seed: number) => [toBase64([seed, 1, 2]), toBase64([seed, 3, 4])];

function send(seed: number): Response {
  const res = new Response();
  sendEmbeddings(res as unknown as ServerResponse, envelope, { vectors: vectorsOf(seed), promptTokens: 2, upstreamId: null, verbatim: true }, "base64");
  return res;
}

describe("sendEmbeddings", () => {
  it("writes the answer as its JSON, with its length", () => {
    const res = send(7);
    const text = res.body!.toString("utf8");
    expect(JSON.parse(text)).toEqual({
      id: "gen-1",
      object: "list",
      data: vectorsOf(7).map((embedding, index) => ({ object: "embedding", embedding, index })),
      model: "m",
      provider: "p",
      usage: envelope.usage,
    });
    expect(res.headers["content-length"]).toBe(Buffer.byteLength(text));
    expect(res.statusCode).toBe(200);
  });

  it("writes into an earlier answer's memory only once that answer has finished", () => {
    const first = send(1);
    const second = send(2);
    // The first answer's bytes are still the socket's: the second has memory of its own.
    expect(second.body!.buffer).not.toBe(first.body!.buffer);
    expect(JSON.parse(first.body!.toString("utf8")).data[0].embedding).toBe(vectorsOf(1)[0]);
    first.emit("finish");
    const third = send(3);
    expect(third.body!.buffer).toBe(first.body!.buffer);
    expect(JSON.parse(third.body!.toString("utf8")).data[0].embedding).toBe(vectorsOf(3)[0]);
    // A response that fails never finishes, and its memory never comes back.
    second.emit("close");
    expect(send(4).body!.buffer).not.toBe(second.body!.buffer);
  });
});
