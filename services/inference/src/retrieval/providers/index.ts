import type { EmbeddingProvider, RerankProvider } from "../types.js";
import { cohereEmbeddings, cohereRerank } from "./cohere.js";
import { googleEmbeddings } from "./google.js";
import { jinaRerank } from "./jina.js";
import { openAiCompatibleEmbeddings, openAiEmbeddings } from "./openai.js";
import { voyageEmbeddings, voyageRerank } from "./voyage.js";

/** Embeddings wire formats by the catalog's adapter names. */
export const embedders: Record<string, EmbeddingProvider> = {
  openai: openAiEmbeddings,
  "openai-compatible": openAiCompatibleEmbeddings,
  google: googleEmbeddings,
  cohere: cohereEmbeddings,
  voyage: voyageEmbeddings,
};

/** Rerank wire formats by the catalog's adapter names; `openai-compatible` servers (Jina, vLLM) speak Jina's. */
export const rerankers: Record<string, RerankProvider> = {
  cohere: cohereRerank,
  voyage: voyageRerank,
  "openai-compatible": jinaRerank,
};
