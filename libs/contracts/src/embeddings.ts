import { z } from "zod";
import { providerPreferencesWithOptions } from "./chat-request.js";
import { modelId, sessionId, traceConfig } from "./shared.js";

const text = z.string().min(1, "must not be empty");
const tokenIds = z.array(z.number().int().min(0)).min(1, "must not be empty");
/** Images travel inline: the embedding providers that take images (Cohere) read data URLs only. */
const imageUrl = z.string().startsWith("data:image/", "must be a data:image/ URL (remote images are not fetched)");

/** One part of a multimodal input: text or an image. */
export const embeddingContentPart = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("text"), text }),
  z.strictObject({ type: z.literal("image_url"), image_url: z.strictObject({ url: imageUrl }) }),
]);

/** Routing preferences, plus settings passed to one provider untouched under `options.<slug>`. */
const routing = {
  model: z.string().min(1, "must not be empty").optional(),
  models: z.array(modelId).min(1).max(8).optional().describe("Fallback models, tried in order"),
  provider: providerPreferencesWithOptions.nullable().optional(),
  session_id: sessionId.optional(),
  trace: traceConfig.optional(),
  user: z.string().max(256).optional().describe("The end user; providers see a per-workspace hash of it"),
};

/** `POST /embeddings`, as OpenAI and OpenRouter define it. */
export const embeddingsRequest = z.strictObject({
  ...routing,
  input: z
    .union([
      text,
      z.array(text).min(1, "must not be empty"),
      tokenIds,
      z.array(tokenIds).min(1, "must not be empty"),
      z.array(z.strictObject({ content: z.array(embeddingContentPart).min(1, "must not be empty") })).min(1, "must not be empty"),
    ])
    .describe("A string, strings, token ids, arrays of token ids, or multimodal items of text and image parts"),
  encoding_format: z.enum(["float", "base64"]).optional().describe("float (default) or base64 of little-endian float32"),
  dimensions: z.number().int().min(1).max(65536).optional().describe("Only endpoints that support it shorten their vectors"),
  input_type: z.string().min(1).max(64).optional().describe("What the inputs are for, e.g. search_query or search_document"),
});
export type EmbeddingsRequest = z.infer<typeof embeddingsRequest>;

export const embeddingObject = z.object({
  object: z.literal("embedding"),
  embedding: z.union([z.array(z.number()), z.string()]),
  index: z.number().int(),
});

export const embeddingsResponse = z.object({
  id: z.string(),
  object: z.literal("list"),
  data: z.array(embeddingObject),
  model: z.string(),
  provider: z.string(),
  usage: z.object({
    prompt_tokens: z.number().int(),
    total_tokens: z.number().int(),
    cost: z.number(),
    is_byok: z.boolean(),
  }),
});
export type EmbeddingsResponse = z.infer<typeof embeddingsResponse>;

/** A document to rerank: its text, or an object with its text (an `image` is refused: no rerank endpoint takes images). */
const rerankDocument = z.union([z.string(), z.strictObject({ text: z.string().optional(), image: z.string().optional() })]);

/** `POST /rerank`, as OpenRouter serves it. */
export const rerankRequest = z.strictObject({
  ...routing,
  query: text,
  documents: z.array(rerankDocument).min(1, "must not be empty"),
  top_n: z.number().int().min(1).optional().describe("How many of the best documents to return; all when omitted"),
  return_documents: z.boolean().optional().describe("Echo each result's document (default true)"),
});
export type RerankRequest = z.infer<typeof rerankRequest>;

export const rerankResponse = z.object({
  id: z.string(),
  model: z.string(),
  provider: z.string(),
  results: z.array(z.object({ index: z.number().int(), relevance_score: z.number(), document: z.object({ text: z.string() }).optional() })),
  usage: z.object({
    cost: z.number(),
    total_tokens: z.number().int().optional(),
    search_units: z.number().int().optional(),
    is_byok: z.boolean(),
  }),
});
export type RerankResponse = z.infer<typeof rerankResponse>;
