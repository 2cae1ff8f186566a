import { z } from "zod";
import { contentFilterFinding } from "./chat-response.js";
import { isoTimestamp } from "./common.js";

/** `GET /generation?id=`: the id comes from the response's `id` or its `X-Generation-Id` header. */
export const generationQuery = z.object({
  id: z.string().min(1, "must not be empty").max(256, "must be at most 256 characters"),
});
export type GenerationQuery = z.infer<typeof generationQuery>;

const count = z.number().int().min(0).nullable();

/** One upstream attempt of a generation (fallbacks make several). */
export const providerAttempt = z.object({
  status: z.number().int().nullable().describe("HTTP status the provider answered with"),
  id: z.string().optional(),
  endpoint_id: z.string().optional(),
  provider_name: z.string().optional(),
  model_permaslug: z.string().optional(),
  latency: z.number().optional(),
  is_byok: z.boolean().optional(),
});

/** The generation record as OpenRouter's `GET /generation` returns it. */
export const generation = z.object({
  id: z.string(),
  upstream_id: z.string().nullable(),
  request_id: z.string().nullable().optional(),
  session_id: z.string().nullable().optional(),
  created_at: isoTimestamp,
  model: z.string(),
  api_type: z.enum(["completions", "embeddings", "rerank", "decisions", "video", "tts", "stt", "image"]).nullable(),
  app_id: z.number().int().nullable(),
  workspace_id: z.string().nullable(),
  preset_id: z.string().nullable(),
  origin: z.string(),
  http_referer: z.string().nullable(),
  user_agent: z.string().nullable(),
  external_user: z.string().nullable(),
  data_region: z.enum(["global", "europe", "us"]),
  router: z.string().nullable(),
  provider_name: z.string().nullable(),
  provider_responses: z.array(providerAttempt).nullable(),
  service_tier: z.string().nullable(),
  streamed: z.boolean().nullable(),
  cancelled: z.boolean().nullable(),
  finish_reason: z.string().nullable(),
  native_finish_reason: z.string().nullable(),
  is_byok: z.boolean(),
  latency: z.number().nullable().describe("Milliseconds to first token"),
  generation_time: z.number().nullable().describe("Milliseconds"),
  moderation_latency: z.number().nullable(),
  tokens_prompt: count,
  tokens_completion: count,
  native_tokens_prompt: count,
  native_tokens_completion: count,
  native_tokens_completion_images: count,
  native_tokens_reasoning: count,
  native_tokens_cached: count,
  num_media_prompt: count,
  num_media_completion: count,
  num_input_audio_prompt: count,
  num_search_results: count,
  num_fetches: count,
  web_search_engine: z.string().nullable(),
  usage: z.number().describe("USD charged"),
  total_cost: z.number(),
  cache_discount: z
    .number()
    .nullable()
    .describe("USD prompt caching saved: the prompt at the prompt price less what it was charged, negative when cache writes cost more; null where no prompt token was read from or written to a cache"),
  upstream_inference_cost: z.number().nullable(),
  response_cache_source_id: z
    .string()
    .nullable()
    .optional()
    .describe("On a response cache hit, the generation whose kept answer this one replayed; null on a request the cache did not answer"),
  content_filters: z.array(contentFilterFinding).optional().describe("What the guardrails' content filters redacted or flagged in the prompt"),
  metadata: z.record(z.string(), z.string()).optional().describe("The request's metadata"),
  app_title: z.string().optional().describe("The calling app's name, from its X-Title header"),
  excluded_endpoints: z
    .array(z.string())
    .optional()
    .describe("Switchyard extension: the endpoints the request's routing left out, and why (`<model> on <provider>: <reason>`)"),
  cache_source_id: z
    .string()
    .optional()
    .describe("Switchyard extension: on a response cache hit, the generation whose kept answer this one replayed (as `response_cache_source_id`)"),
});
export type Generation = z.infer<typeof generation>;

export const generationResponse = z.object({ data: generation });

/** `GET /generation/content?id=`: what a workspace with input/output logging kept of a generation. */
export const generationContentQuery = generationQuery;

/** A failed attempt before the error the client was given. */
const contentErrorAttempt = z.object({ code: z.number().int(), message: z.string(), provider_name: z.string().nullable(), raw: z.string().nullable() });

export const generationContent = z.object({
  /** The error the client was given, when the generation failed. */
  error: z
    .object({
      message: z.string().nullable(),
      status: z.number().int().nullable(),
      provider_name: z.string().nullable(),
      raw: z.string().nullable(),
      previous_errors: z.array(contentErrorAttempt),
    })
    .nullable(),
  /** What the provider was sent: the messages, after the guardrails' content filters. */
  input: z.union([z.object({ prompt: z.string() }), z.object({ messages: z.array(z.unknown()) })]),
  output: z.object({ completion: z.string().nullable(), reasoning: z.string().nullable() }),
});
export type GenerationContent = z.infer<typeof generationContent>;
export const generationContentResponse = z.object({ data: generationContent });
