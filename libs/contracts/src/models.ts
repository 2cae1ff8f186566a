import { z } from "zod";
import { decimalString, modelId, pageQuery } from "./shared.js";

export const outputModalities = [
  "text",
  "image",
  "embeddings",
  "audio",
  "video",
  "rerank",
  "speech",
  "transcription",
] as const;
export const outputModality = z.enum(outputModalities);
export type OutputModality = z.infer<typeof outputModality>;

/** `"all"` disables the filter; otherwise a model matches when it outputs any listed modality. */
export type OutputModalityFilter = "all" | OutputModality[];

const isOutputModality = (value: string): value is OutputModality =>
  (outputModalities as readonly string[]).includes(value);

/** `output_modalities=text,image` or `all`; defaults to `text` as the spec says. */
export const outputModalitiesParam = z
  .string()
  .default("text")
  .transform((raw, ctx): OutputModalityFilter => {
    const items = raw.split(",").map((item) => item.trim());
    if (items.length === 1 && items[0] === "all") return "all";
    const unknown = items.filter((item) => !isOutputModality(item));
    if (unknown.length > 0) {
      ctx.addIssue({
        code: "custom",
        message: `must be a comma-separated list of ${outputModalities.join(", ")}, or all (got ${unknown.join(", ")})`,
      });
      return [];
    }
    return [...new Set(items.filter(isOutputModality))];
  });

/** A comma-separated list of names, e.g. `supported_parameters=tools,seed`. */
const commaList = z
  .string()
  .max(2048)
  .transform((raw) =>
    raw
      .split(",")
      .map((item) => item.trim())
      .filter((item) => item.length > 0),
  );

/** `GET /models/user`; with neither offset nor limit the whole list comes back. */
export const listUserModelsQuery = z.object({
  ...pageQuery,
  output_modalities: outputModalitiesParam,
});
export type ListUserModelsQuery = z.infer<typeof listUserModelsQuery>;

/** `GET /models`: the public catalog with the filters Switchyard implements; others are ignored. */
export const listModelsQuery = listUserModelsQuery.extend({
  input_modalities: commaList.optional(),
  supported_parameters: commaList.optional(),
});
export type ListModelsQuery = z.infer<typeof listModelsQuery>;

/** `GET /embeddings/models`: the catalog's embedding models, paged as `/models`. */
export const listEmbeddingsModelsQuery = z.object(pageQuery);

export const modelArchitecture = z.object({
  input_modalities: z.array(z.string()),
  output_modalities: z.array(z.string()),
  modality: z.string().describe("<in>-><out>, e.g. text+image->text"),
  tokenizer: z.string(),
  instruct_type: z.string().nullable(),
});

/**
 * Prices over the base ones where a condition holds, as OpenRouter's `pricing.overrides` carry them: a long
 * prompt's (`min_prompt_tokens`, a request whose prompt tokens are above it).
 */
export const pricingOverride = z.object({
  min_prompt_tokens: z.number().int(),
  prompt: decimalString.optional(),
  completion: decimalString.optional(),
  input_cache_read: decimalString.optional(),
  input_cache_write: decimalString.optional(),
  input_cache_write_1h: decimalString.optional(),
});

/** USD per unit as decimal strings; the spec's four are always present, the rest when priced. */
export const modelPricing = z.object({
  prompt: decimalString,
  completion: decimalString,
  image: decimalString,
  request: decimalString,
  input_cache_read: decimalString.optional(),
  input_cache_write: decimalString.optional(),
  input_cache_write_1h: decimalString.optional().describe("Cache writes kept an hour (Anthropic's ttl 1h), where they cost more than input_cache_write"),
  internal_reasoning: decimalString.optional(),
  web_search: decimalString.optional(),
  audio: decimalString.optional(),
  audio_output: decimalString.optional().describe("Speech: per audio output token"),
  character: decimalString.optional().describe("Speech: per character of input text"),
  search_unit: decimalString.optional().describe("Rerank: per search unit (a query with up to 100 documents)"),
  image_output: decimalString.optional().describe("Image generation: per generated image"),
  overrides: z.array(pricingOverride).optional().describe("Prices that replace these under a condition (a prompt above min_prompt_tokens)"),
});
export type ModelPricing = z.infer<typeof modelPricing>;

export const defaultParameters = z.object({
  temperature: z.number().nullable().optional(),
  top_p: z.number().nullable().optional(),
  top_k: z.number().int().nullable().optional(),
  frequency_penalty: z.number().nullable().optional(),
  presence_penalty: z.number().nullable().optional(),
  repetition_penalty: z.number().nullable().optional(),
});

/** The spec's model record; the fields it shows only as null are present and nullable. */
export const model = z.object({
  id: modelId,
  canonical_slug: z.string(),
  name: z.string(),
  created: z.number().int().describe("Unix timestamp"),
  description: z.string(),
  context_length: z.number().int(),
  architecture: modelArchitecture,
  pricing: modelPricing,
  top_provider: z.object({
    context_length: z.number().int().nullable(),
    is_moderated: z.boolean(),
    max_completion_tokens: z.number().int().nullable(),
  }),
  supported_parameters: z.array(z.string()),
  links: z.object({ details: z.string().describe("Path of the model's endpoints listing") }),
  default_parameters: defaultParameters.nullable(),
  expiration_date: z.string().nullable(),
  knowledge_cutoff: z.string().nullable(),
  per_request_limits: z.object({ prompt_tokens: z.number(), completion_tokens: z.number() }).nullable(),
  supported_voices: z.array(z.string()).nullable(),
});
export type Model = z.infer<typeof model>;

/** `GET /models` and `GET /models/user`: `links.next` is null on the last page. */
export const listModelsResponse = z.object({
  data: z.array(model),
  total_count: z.number().int().min(0),
  links: z.object({ next: z.string().nullable() }),
});
export type ListModelsResponse = z.infer<typeof listModelsResponse>;

/** `GET /models/count`: the number `GET /models` would list with the same `output_modalities`. */
export const countModelsQuery = z.object({ output_modalities: outputModalitiesParam });
export const modelsCountResponse = z.object({ data: z.object({ count: z.number().int().min(0) }) });
export type ModelsCountResponse = z.infer<typeof modelsCountResponse>;

/** `GET /model/{author}/{slug}`: one model, the record `GET /models` lists. */
export const modelResponse = z.object({ data: model });
export type ModelResponse = z.infer<typeof modelResponse>;

/** `POST /catalog/reload` 200 (Switchyard extension): what the catalog holds after reading the operator's file again. */
export const catalogReloadResponse = z.object({ data: z.object({ models: z.number().int().min(0), providers: z.number().int().min(0) }) });
export type CatalogReloadResponse = z.infer<typeof catalogReloadResponse>;
