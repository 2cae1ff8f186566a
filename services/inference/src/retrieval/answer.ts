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
 * Base64 vectors that are known to need no escaping (the provider's answer was plain, or the gateway
 * encoded them) are written as bytes around a serialised envelope: JSON.stringify and the UTF-8 length of a
 * 16 × 1,536-dimension answer cost more than the rest of the request. Anything else is serialised whole.
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
  // One buffer, each piece written into it once: the vectors and the item framing are ASCII, a byte a character.
  let size = Buffer.byteLength(head) + Buffer.byteLength(tail);
  for (const item of items) for (const piece of item) size += piece.length;
  const body = Buffer.allocUnsafe(size);
  let at = body.write(head);
  for (const item of items) for (const piece of item) at += body.write(piece, at, "latin1");
  body.write(tail, at);
  res.statusCode = 200;
  res.setHeader("Content-Type", "application/json; charset=utf-8");
  res.setHeader("Content-Length", body.length);
  res.end(body);
}
