import { extended } from "@switchyard/runtime";
import { z } from "zod";
import { countCeiling, UpstreamError, type UpstreamTarget } from "@switchyard/upstream";
import type { RerankAnswer, RerankCall, Vector } from "../types.js";
import { dimensionsOf, isFloat32Base64 } from "./vectors.js";

/** An answer that is not what the provider's wire promises; another endpoint may answer properly. */
export const malformed = (target: UpstreamTarget, what: string, problem: string): UpstreamError =>
  new UpstreamError(`${target.provider} answered unusable ${what}: ${problem}`, 502, true);

/** A zod failure in a few words: where, and what was wrong. */
export const issueOf = (error: z.ZodError): string => {
  const issue = error.issues[0];
  return issue ? `${issue.path.join(".") || "the answer"}: ${issue.message}` : "it does not parse";
};

/** Checked by hand rather than per element through zod: answers carry hundreds of thousands of numbers. */
const isFloats = (value: unknown): value is number[] => Array.isArray(value) && value.length > 0 && value.every((n) => typeof n === "number");

/** A vector of numbers. */
export const floatVector = z.custom<number[]>(isFloats, "expected a vector of numbers");

/** A vector of numbers, or base64 of little-endian float32 values (OpenAI's and Voyage's `base64`). */
export const vector = z.custom<Vector>(
  (value) => isFloats(value) || (typeof value === "string" && isFloat32Base64(value)),
  "expected a vector of numbers or base64 of float32 values",
);

/** A count the provider reported: a non-negative number a record can hold (a fraction counts as the next whole one), or nothing. */
export const count = z.number().min(0).max(countCeiling).transform(Math.ceil).nullish();

/**
 * Checks the vectors of an answer against the call: one per input, all of one size, and that size
 * `dimensions` when the caller asked for that number (a server that ignores `dimensions` must not pass off
 * another size).
 */
export function checkVectors(target: UpstreamTarget, vectors: Vector[], inputs: number, dimensions: number | undefined): Vector[] {
  if (vectors.length !== inputs) throw malformed(target, "embeddings", `${vectors.length} vectors for ${inputs} inputs`);
  const sizes = vectors.map(dimensionsOf);
  const expected = dimensions ?? sizes[0];
  const other = sizes.find((size) => size !== expected);
  if (other === undefined) return vectors;
  if (dimensions !== undefined) throw malformed(target, "embeddings", `a vector of ${other} dimensions where ${dimensions} were asked`);
  throw malformed(target, "embeddings", `vectors of ${expected} and ${other} dimensions in one answer`);
}

/**
 * Vectors in input order, from answer items that say their place (`index`, as OpenAI's data may come out of
 * order) or, when none does, from their order. Places must be the inputs' own, each once.
 */
export function inInputOrder(target: UpstreamTarget, items: ReadonlyArray<{ index?: number | null | undefined; embedding: Vector }>, inputs: number): Vector[] {
  const placed = items.filter((item) => item.index !== undefined && item.index !== null);
  if (placed.length === 0) return items.map((item) => item.embedding);
  if (placed.length !== items.length) throw malformed(target, "embeddings", "some vectors have an index and some do not");
  const vectors = new Array<Vector | undefined>(inputs);
  for (const { index, embedding } of items) {
    if (typeof index !== "number" || !Number.isInteger(index) || index < 0 || index >= inputs) throw malformed(target, "embeddings", `index ${index} for ${inputs} inputs`);
    if (vectors[index] !== undefined) throw malformed(target, "embeddings", `index ${index} twice`);
    vectors[index] = embedding;
  }
  const missing = vectors.findIndex((v) => v === undefined);
  if (missing !== -1) throw malformed(target, "embeddings", `no vector for input ${missing}`);
  return vectors as Vector[];
}

/**
 * A rerank request's body in the fields every wire shares (`top` names the count: `top_n`, Voyage's
 * `top_k`), after the caller's provider options, which never replace them, and then a wire's own `fixed`
 * fields.
 */
export const rerankBody = (call: RerankCall, target: UpstreamTarget, top: "top_n" | "top_k", fixed: Record<string, unknown> = {}): Record<string, unknown> =>
  extended(call.options, {
    model: target.upstreamModel,
    query: call.query,
    documents: call.documents,
    ...(call.topN !== undefined ? { [top]: call.topN } : {}),
    ...fixed,
  });

/** One rerank result as Cohere, Voyage, Jina and vLLM send it. */
export const rankedDocument = z.looseObject({ index: z.number().int(), relevance_score: z.number() });

/**
 * Rerank results as the gateway answers them: each index one of the documents' places, once, best score
 * first whatever order the provider used, and no more than `topN` (a server that ignores it is cut here).
 */
export function bestFirst(
  target: UpstreamTarget,
  results: ReadonlyArray<z.infer<typeof rankedDocument>>,
  documents: number,
  topN: number | undefined,
): RerankAnswer["results"] {
  const seen = new Set<number>();
  for (const { index } of results) {
    if (index < 0 || index >= documents) throw malformed(target, "rerank results", `index ${index} for ${documents} documents`);
    if (seen.has(index)) throw malformed(target, "rerank results", `index ${index} twice`);
    seen.add(index);
  }
  const sorted = results.map(({ index, relevance_score }) => ({ index, score: relevance_score })).sort((a, b) => b.score - a.score);
  return topN === undefined ? sorted : sorted.slice(0, topN);
}
