import type { UpstreamTarget } from "@switchyard/upstream";
import type { EmbeddingInput, EmbeddingPart } from "../types.js";

/** The URL of `path` under the target's base URL, which comes without a trailing path (a trailing slash is dropped). */
export const endpointUrl = (target: UpstreamTarget, path: string): string => `${target.baseUrl.replace(/\/$/, "")}${path}`;

/** `Authorization: Bearer <key>`, as OpenAI, Cohere, Voyage and Jina take it; none for an endpoint without a key. */
export const bearer = (target: UpstreamTarget): Record<string, string> => (target.apiKey ? { authorization: `Bearer ${target.apiKey}` } : {});

type TextPart = Extract<EmbeddingPart, { type: "text" }>;
const isText = (part: EmbeddingPart): part is TextPart => part.type === "text";

/**
 * The text of an input, for wire formats that embed text alone: a text input, or parts that are all text,
 * joined by newlines. Token ids and images have no text here; the route checks an adapter's `tokens` and
 * `images` before calling it, so reaching the throw is a caller's mistake.
 */
export function textOf(input: EmbeddingInput, provider: string): string {
  if (input.kind === "text") return input.text;
  if (input.kind === "parts" && input.parts.every(isText)) return input.parts.map((part) => part.text).join("\n");
  throw new TypeError(`${provider} embeddings take text only, not ${input.kind === "tokens" ? "token ids" : "images"}`);
}

/** What inputs are for, whichever provider's name for it the caller used. */
type Purpose = "query" | "document" | "classification" | "clustering" | "similarity";

const purposes: Readonly<Record<string, Purpose>> = {
  search_query: "query",
  query: "query",
  retrieval_query: "query",
  search_document: "document",
  document: "document",
  passage: "document",
  retrieval_document: "document",
  classification: "classification",
  clustering: "clustering",
  semantic_similarity: "similarity",
  similarity: "similarity",
};

/**
 * A provider's own name for `inputType`: one of `names` when the caller used a name of the same purpose
 * (Cohere's `search_query`, Voyage's `query`, Gemini's `RETRIEVAL_QUERY`…), else the caller's name as it came,
 * for the provider to take or refuse. `null` in `names` means the provider has no name for that purpose.
 */
export function providerInputType(inputType: string, names: Partial<Record<Purpose, string | null>>): string | null {
  const purpose = purposes[inputType.toLowerCase()];
  if (purpose === undefined) return inputType;
  const name = names[purpose];
  return name === undefined ? inputType : name;
}
