import { z } from "zod";
import { serverToolCallDetail, toolCall } from "./chat-message.js";

export const finishReason = z.enum(["stop", "length", "tool_calls", "content_filter", "error"]);
export type FinishReason = z.infer<typeof finishReason>;

/**
 * Usage as the SDK validates it. The two upstream cost parts are numbers, never null: the SDK rejects
 * null there even though the spec's table allows it.
 */
export const chatUsage = z.object({
  prompt_tokens: z.number().int().min(0),
  completion_tokens: z.number().int().min(0),
  total_tokens: z.number().int().min(0),
  prompt_tokens_details: z.object({
    cached_tokens: z.number().int().min(0),
    cache_write_tokens: z.number().int().min(0).optional(),
    audio_tokens: z.number().int().min(0).optional(),
    video_tokens: z.number().int().min(0).optional(),
  }),
  completion_tokens_details: z.object({
    reasoning_tokens: z.number().int().min(0),
    audio_tokens: z.number().int().min(0).nullable().optional(),
    accepted_prediction_tokens: z.number().int().min(0).nullable().optional(),
    rejected_prediction_tokens: z.number().int().min(0).nullable().optional(),
  }),
  cost: z.number().min(0).describe("USD charged for this generation"),
  cost_details: z.object({
    upstream_inference_prompt_cost: z.number(),
    upstream_inference_completions_cost: z.number(),
    upstream_inference_cost: z.number().nullable(),
  }),
  is_byok: z.boolean(),
  server_tool_use_details: z.object({
    tool_calls_requested: z.number().int().min(0).describe("Server tool calls the model made"),
    tool_calls_executed: z.number().int().min(0).describe("Those that ran and produced a result"),
    web_search_requests: z.number().int().min(0).optional().describe("Searches sent to the search backend"),
  }),
});
export type ChatUsage = z.infer<typeof chatUsage>;

/** Routing metadata, present only when the caller opts in with `X-OpenRouter-Metadata: enabled`. */
/** A content filter of a guardrail that matched the prompt (never what it matched). */
export const contentFilterFinding = z.object({
  guardrail_id: z.string(),
  filter: z.string().describe("The builtin's slug, or pattern:<n> for the guardrail's n-th content_filters pattern"),
  action: z.enum(["block", "redact", "flag"]),
  count: z.number().int().min(1),
});
export type ContentFilterFinding = z.infer<typeof contentFilterFinding>;

export const openRouterMetadata = z.object({
  attempt: z.number().int().min(1),
  endpoints: z.object({
    total: z.number().int().min(0),
    available: z.array(
      z.object({
        model: z.string(),
        provider: z.string(),
        selected: z.boolean(),
        latency_p50: z.number().nullable().optional().describe("Median time to first output over 30 minutes (ms) when the order was made"),
        throughput_p50: z.number().nullable().optional().describe("Median output tokens per second over 30 minutes"),
        uptime_last_5m: z.number().nullable().optional().describe("Percent of attempts without a provider-side failure"),
      }),
    ),
  }),
  generation_time: z.number().int().min(0).describe("Milliseconds"),
  is_byok: z.boolean(),
  region: z.string().nullable(),
  requested: z.string().describe("The model as requested"),
  strategy: z.string().describe("direct, fallback, ..."),
  summary: z.string(),
  content_filters: z.array(contentFilterFinding).optional().describe("What the guardrails' content filters redacted or flagged"),
});
export type OpenRouterMetadata = z.infer<typeof openRouterMetadata>;

const tokenLogprob = z.object({
  token: z.string(),
  logprob: z.number(),
  bytes: z.array(z.number().int()).nullable(),
  top_logprobs: z.array(z.object({ token: z.string(), logprob: z.number(), bytes: z.array(z.number().int()).nullable() })),
});
const logprobs = z.object({ content: z.array(tokenLogprob).nullable() }).nullable().optional();

const detailBase = {
  id: z.string().nullable().optional(),
  index: z.number().int().optional(),
  format: z.string().nullable().optional(),
};
/**
 * Structured reasoning; encrypted blocks must be sent back unchanged on the next turn. Server tool calls
 * the gateway ran travel here too, as the SDK expects them.
 */
export const reasoningDetail = z.discriminatedUnion("type", [
  z.object({
    type: z.literal("reasoning.text"),
    text: z.string().nullable().optional(),
    signature: z.string().nullable().optional(),
    ...detailBase,
  }),
  z.object({ type: z.literal("reasoning.summary"), summary: z.string(), ...detailBase }),
  z.object({ type: z.literal("reasoning.encrypted"), data: z.string(), ...detailBase }),
  serverToolCallDetail,
]);

export const responseMessage = z.object({
  role: z.literal("assistant"),
  content: z.string().nullable(),
  reasoning: z.string().nullable().optional(),
  reasoning_details: z.array(reasoningDetail).optional(),
  refusal: z.string().nullable().optional(),
  tool_calls: z.array(toolCall).optional(),
  images: z.array(z.object({ type: z.literal("image_url"), image_url: z.object({ url: z.string() }) })).optional(),
});

/** Non-streaming `POST /chat/completions` 200 body. */
export const chatCompletion = z.object({
  id: z.string(),
  object: z.literal("chat.completion"),
  created: z.number().int().describe("Unix timestamp"),
  model: z.string(),
  system_fingerprint: z.string().nullable(),
  service_tier: z.string().nullable().describe("Service tier the upstream used"),
  choices: z.array(
    z.object({
      index: z.number().int().min(0),
      finish_reason: finishReason,
      native_finish_reason: z.string().nullable().optional(),
      message: responseMessage,
      logprobs,
    }),
  ),
  usage: chatUsage,
  openrouter_metadata: openRouterMetadata.optional(),
});
export type ChatCompletion = z.infer<typeof chatCompletion>;

export const chunkToolCall = z.object({
  index: z.number().int().min(0),
  id: z.string().optional(),
  type: z.literal("function").optional(),
  function: z.object({ name: z.string().optional(), arguments: z.string().optional() }).optional(),
});

/**
 * One SSE `data:` frame of a streamed completion. `system_fingerprint` is omitted rather than null
 * and `usage` is omitted rather than null: the SDK rejects both nulls in chunks.
 */
export const chatCompletionChunk = z.object({
  id: z.string(),
  object: z.literal("chat.completion.chunk"),
  created: z.number().int(),
  model: z.string(),
  system_fingerprint: z.string().optional(),
  service_tier: z.string().nullable().optional(),
  choices: z.array(
    z.object({
      index: z.number().int().min(0),
      delta: z.object({
        role: z.literal("assistant").optional(),
        content: z.string().nullable().optional(),
        reasoning: z.string().nullable().optional(),
        reasoning_details: z.array(reasoningDetail).optional(),
        refusal: z.string().nullable().optional(),
        tool_calls: z.array(chunkToolCall).optional(),
      }),
      finish_reason: finishReason.nullable(),
      native_finish_reason: z.string().nullable().optional(),
      logprobs,
    }),
  ),
  usage: chatUsage.optional(),
  openrouter_metadata: openRouterMetadata.optional(),
  error: z
    .object({
      code: z.number().int(),
      message: z.string(),
      metadata: z.looseObject({ error_type: z.string(), provider_code: z.string().optional() }).optional(),
    })
    .optional()
    .describe("Set on the one frame sent when the stream fails after its first byte"),
});
export type ChatCompletionChunk = z.infer<typeof chatCompletionChunk>;

/**
 * The in-band error that ends a stream after its first byte (the status is already 200): one chunk with
 * `finish_reason: "error"` and a top-level `error`; no `[DONE]` follows it.
 */
export const streamErrorChunk = (id: string | null, model: string | undefined, code: number, message: string, created = Math.floor(Date.now() / 1000)) => ({
  id,
  object: "chat.completion.chunk" as const,
  created,
  ...(model ? { model } : {}),
  choices: [{ index: 0, delta: {}, finish_reason: "error" as const }],
  error: { code, message },
});
