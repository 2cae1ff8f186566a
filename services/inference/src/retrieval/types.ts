import type { UpstreamTarget } from "@switchyard/upstream";

export type { UpstreamTarget } from "@switchyard/upstream";

/** One input to embed: text, token ids (OpenAI's pre-tokenized input), or multimodal parts. */
export type EmbeddingInput =
  | { kind: "text"; text: string }
  | { kind: "tokens"; tokens: number[] }
  | { kind: "parts"; parts: EmbeddingPart[] };

/** A part of a multimodal input: text, or an image as a `data:image/` URL. */
export type EmbeddingPart = { type: "text"; text: string } | { type: "image"; url: string };

/** Vectors as the provider sent them: floats, or base64 of little-endian float32 (OpenAI's `base64`). */
export type Vector = number[] | string;

export interface EmbeddingCall {
  inputs: EmbeddingInput[];
  /** The encoding the client asked for; an adapter whose provider can send it asks for it, else sends floats. */
  encoding: "float" | "base64";
  dimensions?: number | undefined;
  /** What the inputs are for (`search_query`, `search_document`, …), for providers that embed them differently. */
  inputType?: string | undefined;
  /** The request's end user, hashed as the gateway forwards it; adapters whose wire has a place for it send it. */
  user?: string | undefined;
  /** Provider-specific fields the caller passed for this provider (`provider.options[<slug>]`), merged into the body. */
  options: Record<string, unknown>;
}

export interface EmbeddingAnswer {
  /** One vector per input, in input order. */
  vectors: Vector[];
  /** Input tokens as the provider counted them; undefined when it did not say. */
  promptTokens: number | undefined;
  upstreamId: string | null;
  /**
   * Base64 vectors can go into the client's JSON as they are: the provider's answer was ASCII without a
   * backslash, so they hold no quote, backslash or control character.
   */
  verbatim: boolean;
}

/** One embeddings wire format. `tokens`/`images`/`dimensions`/`inputType`: whether it can carry token-id inputs, image parts, `dimensions`, `input_type`. */
export interface EmbeddingProvider {
  readonly tokens: boolean;
  readonly images: boolean;
  readonly dimensions: boolean;
  readonly inputType: boolean;
  embed(call: EmbeddingCall, target: UpstreamTarget, signal: AbortSignal): Promise<EmbeddingAnswer>;
}

export interface RerankCall {
  query: string;
  documents: string[];
  /** The number of best documents to return; all when undefined. */
  topN: number | undefined;
  options: Record<string, unknown>;
}

export interface RerankAnswer {
  /** The documents' places in the request and their scores, best first. */
  results: Array<{ index: number; score: number }>;
  /** Tokens the provider counted (Jina, Voyage), if it said. */
  totalTokens: number | undefined;
  /** Search units the provider billed (Cohere), if it said. */
  searchUnits: number | undefined;
  upstreamId: string | null;
}

/** One rerank wire format. */
export interface RerankProvider {
  rerank(call: RerankCall, target: UpstreamTarget, signal: AbortSignal): Promise<RerankAnswer>;
}
