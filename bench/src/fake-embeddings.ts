import { seeded } from "./seeded.js";
import { embeddingInputs } from "./embedding-inputs.js";

/** The length of the fake upstream's vectors: text-embedding-3-small's. */
export const embeddingDimensions = 1536;

/** Distinct vectors the upstream has; input `i` gets vector `i % embeddingVariety`. */
export const embeddingVariety = embeddingInputs.length;

/**
 * The prompt tokens the upstream counts per input, whatever its text: about 4 characters per token of the
 * benchmark's passages (102), so an answer to the benchmark's 16 passages reports 1632.
 */
export const embeddingTokensPerInput = Math.round(embeddingInputs.join("").length / embeddingInputs.length / 4);

/** A unit vector of float32 values, as embedding models answer, from `seed`. */
function unitVector(seed: number): Float32Array {
  const next = seeded(seed);
  const values = Array.from({ length: embeddingDimensions }, () => next() * 2 - 1);
  const norm = Math.hypot(...values);
  return Float32Array.from(values, (value) => value / norm);
}

/** Little-endian float32 bytes in base64, as OpenAI sends `encoding_format: "base64"`. */
function base64Of(vector: Float32Array): string {
  const view = new DataView(new ArrayBuffer(vector.length * 4));
  vector.forEach((value, i) => view.setFloat32(i * 4, value, true));
  return Buffer.from(view.buffer).toString("base64");
}

export type EmbeddingEncoding = "float" | "base64";

const vectors = Array.from({ length: embeddingVariety }, (_, i) => unitVector(i + 1));

/** Each vector's `embedding` value as JSON, in both encodings, made once. */
const vectorJson: Record<EmbeddingEncoding, string[]> = {
  float: vectors.map((vector) => JSON.stringify(Array.from(vector))),
  base64: vectors.map((vector) => JSON.stringify(base64Of(vector))),
};

/** OpenAI's answer to `count` inputs: a `list` of one `embedding` per input, in input order, and its usage. */
function answerText(count: number, encoding: EmbeddingEncoding): string {
  const data = Array.from({ length: count }, (_, i) => `{"object":"embedding","index":${i},"embedding":${vectorJson[encoding][i % embeddingVariety]}}`);
  const tokens = count * embeddingTokensPerInput;
  return `{"object":"list","data":[${data.join(",")}],"model":"bench","usage":{"prompt_tokens":${tokens},"total_tokens":${tokens}}}`;
}

/** The answers to the benchmark's requests (as many inputs as its passages), in both encodings, made once. */
const benchAnswers: Record<EmbeddingEncoding, Buffer> = {
  float: Buffer.from(answerText(embeddingInputs.length, "float")),
  base64: Buffer.from(answerText(embeddingInputs.length, "base64")),
};

/**
 * The body answering an embeddings request: one vector per input (a string input is one input), base64 when
 * `encoding_format` is `base64` and floats otherwise. An answer to as many inputs as the benchmark sends is
 * the one made at start; other counts are joined from the vectors' JSON made at start.
 */
export function embeddingsAnswer(request: { input?: unknown; encoding_format?: unknown }): Buffer {
  const count = Array.isArray(request.input) ? request.input.length : 1;
  const encoding: EmbeddingEncoding = request.encoding_format === "base64" ? "base64" : "float";
  return count === embeddingInputs.length ? benchAnswers[encoding] : Buffer.from(answerText(count, encoding));
}
