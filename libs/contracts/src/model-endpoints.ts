import { z } from "zod";
import { pricingOverride } from "./models.js";
import { decimalString } from "./shared.js";

const pathSegment = z
  .string()
  .min(1, "must not be empty")
  .max(128)
  .regex(/^[A-Za-z0-9._:~-]+$/, "must be a URL-safe path segment");

/** `GET /models/{author}/{slug}/endpoints`: the model id `<author>/<slug>` split in two. */
export const modelEndpointsParams = z.object({ author: pathSegment, slug: pathSegment });

/** Percentiles of a figure over a window (milliseconds of time to first output, or output tokens per second). */
const percentileStats = z.object({ p50: z.number(), p75: z.number(), p90: z.number(), p99: z.number() });

/** One provider's offer of a model, as OpenRouter's endpoint listing shows it. */
export const modelEndpoint = z.object({
  name: z.string().describe("<Provider> | <model id>"),
  model_id: z.string(),
  model_name: z.string(),
  provider_name: z.string(),
  tag: z.string().describe("Provider slug, usable in provider.order/only/ignore"),
  context_length: z.number().int(),
  max_completion_tokens: z.number().int().nullable(),
  max_prompt_tokens: z.number().int().nullable(),
  pricing: z.object({
    prompt: decimalString,
    completion: decimalString,
    image: decimalString.optional(),
    request: decimalString.optional(),
    input_cache_read: decimalString.optional(),
    input_cache_write: decimalString.optional(),
    input_cache_write_1h: decimalString.optional(),
    internal_reasoning: decimalString.optional(),
    web_search: decimalString.optional(),
    audio: decimalString.optional(),
    audio_output: decimalString.optional(),
    image_output: decimalString.optional(),
    overrides: z.array(pricingOverride).optional(),
    discount: z.number().optional(),
  }),
  quantization: z.string().nullable(),
  status: z.number().int().optional().describe("0 is healthy; negative values are degraded states"),
  supported_parameters: z.array(z.string()),
  supports_implicit_caching: z.boolean(),
  supports_tool_choice: z.object({
    auto: z.boolean(),
    function: z.boolean(),
    none: z.boolean(),
    required: z.boolean(),
  }),
  latency_last_30m: percentileStats.nullable(),
  throughput_last_30m: percentileStats.nullable(),
  uptime_last_5m: z.number().nullable(),
  uptime_last_30m: z.number().nullable(),
  uptime_last_1d: z.number().nullable(),
});
export type ModelEndpoint = z.infer<typeof modelEndpoint>;

export const modelEndpoints = z.object({
  id: z.string(),
  name: z.string(),
  created: z.number().int(),
  description: z.string(),
  architecture: z.object({
    input_modalities: z.array(z.string()),
    output_modalities: z.array(z.string()),
    modality: z.string().nullable(),
    tokenizer: z.string().nullable(),
    instruct_type: z.string().nullable(),
  }),
  endpoints: z.array(modelEndpoint),
});
export type ModelEndpoints = z.infer<typeof modelEndpoints>;
export const modelEndpointsResponse = z.object({ data: modelEndpoints });

/** `GET /endpoints/zdr`: every usable endpoint that retains no data, whatever its model. */
export const listZdrEndpointsResponse = z.object({ data: z.array(modelEndpoint) });
export type ListZdrEndpointsResponse = z.infer<typeof listZdrEndpointsResponse>;

/**
 * `POST /internal/endpoint-stats` (inference, media): how each endpoint has been doing, every replica's
 * generations together, in the fields `GET /models/{author}/{slug}/endpoints` publishes.
 */
export const endpointStatsEntry = z.object({
  provider: z.string(),
  model: z.string(),
  latency_last_30m: percentileStats.nullable(),
  throughput_last_30m: percentileStats.nullable(),
  uptime_last_5m: z.number().nullable(),
  uptime_last_30m: z.number().nullable(),
  uptime_last_1d: z.number().nullable(),
});
export type EndpointStatsEntry = z.infer<typeof endpointStatsEntry>;
export const endpointStatsResponse = z.object({ data: z.array(endpointStatsEntry) });
