import { toPico } from "@switchyard/runtime";

/** What one embeddings or rerank generation used. */
export interface RetrievalUsage {
  tokens: number;
  searchUnits: number;
}

/**
 * The one pricing function of embeddings and rerank, in picodollars: `prompt` per input token,
 * `search_unit` per search unit (Cohere's rerank billing), `request` per request.
 */
export const retrievalCost = (pricing: Record<string, string>, usage: RetrievalUsage): bigint =>
  BigInt(usage.tokens) * toPico(pricing.prompt) + BigInt(usage.searchUnits) * toPico(pricing.search_unit) + toPico(pricing.request);
