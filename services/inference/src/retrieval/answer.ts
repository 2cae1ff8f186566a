import { sendJson } from "@switchyard/runtime";
import type { ServerResponse } from "node:http";
import { toBase64, toFloats } from "./providers/vectors.js";
import type { EmbeddingAnswer, Vector } from "./types.js";

/** Everything of an embeddings answer but its vectors, in the order the answer names them. */
export interface EmbeddingsEnvelope {
  id: string;
  model: string;
  provider: string;
  usage: { prompt_tokens: number; total_tokens: number; cost: number; is_byok: boolean };
}

/** A vector in the encoding the client asked for, whichever the provider sent. */
const encoded = (vector: Vector, format: "float" | "base64"): Vector =>
  format === "base64" ? (typeof vector === "string" ? vector : toBase64(vector)) : typeof vector === "string" ? toFloats(vector) : vector;

/**
 * Buffers of answers already written, for the next answers to be written into: on Node 24 (not on 20 or
 * 22) every fresh large buffer counts towards the external memory that starts V8's full collections, and
 * one per 130 KB answer brought one every 200 ms under load. A buffer comes back once its answer has been handed
 * to the socket (`finish`); one of a response that failed is left to the collector. At most `pooled`
 * buffers of at most `pooledBytes` each wait here.
 */
const spare: Buffer[] = [];
const pooled = 16;
const pooledBytes = 1024 * 1024;

/** A buffer of at least `size` bytes: a spare one, or a new one rounded up to 64 KB so that it fits later answers. */
function answerBuffer(size: number): Buffer {
  const at = spare.findIndex((buffer) => buffer.length >= size);
  if (at !== -1) return spare.splice(at, 1)[0]!;
  return Buffer.allocUnsafeSlow(Math.ceil(size / 65536) * 65536);
}

function giveBack(buffer: Buffer): void {
  if (buffer.length <= pooledBytes && spare.length < pooled) spare.push(buffer);
}

/**
 * Base64 vectors that are known to need no escaping (the provider's answer was plain, or the gateway
 * encoded them) are written as bytes around a serialised envelope: JSON.stringify and the UTF-8 length of a
 * 16 × 1,536-dimension answer cost more than the rest of the request. Other answers are serialised whole.
 */
export function sendEmbeddings(res: ServerResponse, envelope: EmbeddingsEnvelope, answer: EmbeddingAnswer, format: "float" | "base64"): void {
  const vectors = answer.vectors.map((vector) => encoded(vector, format));
  const safe = format === "base64" && (answer.verbatim || answer.vectors.every((vector) => typeof vector !== "string"));
  if (!safe) {
    const data = vectors.map((embedding, index) => ({ object: "embedding", embedding, index }));
    return sendJson(res, 200, { id: envelope.id, object: "list", data, model: envelope.model, provider: envelope.provider, usage: envelope.usage });
  }
  const { model, provider, usage } = envelope;
  const head = `{"id":${JSON.stringify(envelope.id)},"object":"list","data":[`;
  const tail = `],"model":${JSON.stringify(model)},"provider":${JSON.stringify(provider)},"usage":${JSON.stringify(usage)}}`;
  const items = vectors.map((vector, index) => [`${index ? "," : ""}{"object":"embedding","embedding":"`, vector as string, `","index":${index}}`]);
  // Each piece written into the buffer once: the vectors and the item framing are ASCII, a byte a character.
  let size = Buffer.byteLength(head) + Buffer.byteLength(tail);
  for (const item of items) for (const piece of item) size += piece.length;
  const buffer = answerBuffer(size);
  let at = buffer.write(head);
  for (const item of items) for (const piece of item) at += buffer.write(piece, at, "latin1");
  buffer.write(tail, at);
  res.statusCode = 200;
  res.setHeader("Content-Type", "application/json; charset=utf-8");
  res.setHeader("Content-Length", size);
  // `finish`: the socket has the bytes (a response that fails never finishes).
  res.once("finish", () => giveBack(buffer));
  res.end(buffer.subarray(0, size));
}
