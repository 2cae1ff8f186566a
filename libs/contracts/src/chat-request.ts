import { z } from "zod";
import { cacheControl, chatMessage, chatTool, textPart, toolChoice } from "./chat-message.js";
import { jsonObject, modelId, sessionId, traceConfig } from "./shared.js";

/** Opt-in header for `openrouter_metadata` on chat responses; the legacy name is still honoured. */
export const metadataHeader = "x-openrouter-metadata";
export const legacyMetadataHeader = "x-openrouter-experimental-metadata";
export const metadataHeaderValue = z.enum(["disabled", "enabled"]).default("disabled");
/** A body `session_id` wins over this header. */
export const sessionIdHeader = "x-session-id";
/** Every inference response carries the generation id here, for `GET /generation?id=`. */
export const generationIdHeader = "x-generation-id";

// Every optional sampling knob also accepts null: the SDK types them `T | null` and sends null as is.
const range = (min: number, max: number) => z.number().min(min).max(max).nullable().optional();
const positiveInt = z.number().int().min(1).nullable().optional();

export const reasoningEfforts = ["max", "xhigh", "high", "medium", "low", "minimal", "none"] as const;
export const reasoningEffort = z.enum(reasoningEfforts);
export type ReasoningEffort = z.infer<typeof reasoningEffort>;

export const reasoningConfig = z.looseObject({
  effort: reasoningEffort.nullable().optional(),
  summary: z.enum(["auto", "concise", "detailed"]).nullable().optional(),
  max_tokens: z.number().int().min(0).nullable().optional(),
  exclude: z.boolean().optional(),
  enabled: z.boolean().optional(),
});

export const serviceTier = z.enum(["auto", "default", "fast", "flex", "priority", "scale"]);
export type ServiceTier = z.infer<typeof serviceTier>;

const providerRef = z.string().min(1).max(128);
export const providerSort = z.enum(["price", "throughput", "latency", "exacto"]);
/** A latency or throughput figure: seconds or tokens per second, never below zero. */
const figure = z.number().min(0, "must not be negative");
/** Cutoffs per percentile, as OpenRouter takes them; strict, so a percentile it does not take is refused rather than dropped. */
const percentileCutoffs = z.strictObject({
  p50: figure.nullable().optional(),
  p75: figure.nullable().optional(),
  p90: figure.nullable().optional(),
  p99: figure.nullable().optional(),
});

/** A price limit in USD: a decimal string, as OpenRouter's SDK sends it, or a number, as JSON clients may. */
const usd = z
  .union([z.string().regex(/^\d+(\.\d+)?$/, "must be a non-negative decimal string"), z.number().min(0).max(1e9)])
  .transform((value) => (typeof value === "number" ? value.toFixed(12) : value));

/**
 * `provider.max_price`: OpenRouter's five keys and every other price the catalog bills. As on OpenRouter,
 * `prompt` and `completion` are USD per million tokens, and so are the other text-token prices; the rest
 * are USD per unit (request, image, audio token, second of audio, character, search unit). Strict, so a
 * key that is not a catalog price is refused rather than dropped.
 */
export const maxPrice = z.strictObject({
  prompt: usd.optional().describe("Per million prompt tokens"),
  completion: usd.optional().describe("Per million completion tokens"),
  request: usd.optional(),
  image: usd.optional().describe("Per input image"),
  audio: usd.optional().describe("Per audio input token"),
  input_cache_read: usd.optional().describe("Per million cached prompt tokens read"),
  input_cache_write: usd.optional().describe("Per million prompt tokens written to the cache"),
  input_cache_write_1h: usd.optional().describe("Per million prompt tokens written to the one-hour cache"),
  internal_reasoning: usd.optional().describe("Per million reasoning tokens"),
  web_search: usd.optional(),
  audio_second: usd.optional().describe("Transcription: per second of audio"),
  image_output: usd.optional().describe("Image generation: per generated image"),
  audio_output: usd.optional().describe("Speech: per audio output token"),
  character: usd.optional().describe("Speech: per character of input text"),
  search_unit: usd.optional().describe("Rerank: per search unit"),
});
export type MaxPrice = z.infer<typeof maxPrice>;
/** Every key of `provider.max_price`. */
export const maxPriceKeys = Object.keys(maxPrice.shape) as Array<keyof MaxPrice>;

/**
 * Provider routing preferences of one request (merged over the workspace's): the keys OpenRouter documents
 * for its `provider` object. Strict, so a misspelt key is a 400 naming it rather than a setting dropped.
 */
export const providerPreferences = z.strictObject({
  order: z.array(providerRef).nullable().optional().describe("Providers to try first, in this order"),
  allow_fallbacks: z
    .boolean()
    .nullable()
    .optional()
    .describe("false: only the providers of order, or without order only the first endpoint of the default order"),
  only: z.array(providerRef).nullable().optional().describe("Only these providers may serve the request"),
  ignore: z.array(providerRef).nullable().optional().describe("These providers never serve the request"),
  require_parameters: z.boolean().nullable().optional().describe("Only endpoints that support every parameter of the request"),
  data_collection: z.enum(["allow", "deny"]).nullable().optional().describe("deny: no provider that retains prompts or trains on them"),
  zdr: z.boolean().nullable().optional().describe("Only zero-data-retention endpoints"),
  enforce_distillable_text: z.boolean().nullable().optional().describe("Only models whose authors allow distilling their output"),
  quantizations: z
    .array(z.string().min(1))
    .nullable()
    .optional()
    .describe("Allowed quantizations; an endpoint that declares none is unknown"),
  sort: z
    .union([
      providerSort,
      z.strictObject({ by: providerSort.nullable().optional(), partition: z.enum(["model", "none"]).nullable().optional() }),
    ])
    .nullable()
    .optional()
    .describe("price: cheapest first; without it, the workspace's default_provider_sort, else a price-weighted order"),
  max_price: maxPrice.optional().describe("USD per million tokens for prompt and completion, per unit for the other prices; endpoints above one are skipped, a key that is not a catalog price is a 400"),
  preferred_max_latency: z
    .union([figure, percentileCutoffs])
    .nullable()
    .optional()
    .describe("Seconds to first output (a number is the p50's); endpoints above it go behind the others"),
  preferred_min_throughput: z
    .union([figure, percentileCutoffs])
    .nullable()
    .optional()
    .describe("Output tokens per second (a number is the p50's); endpoints below it go behind the others"),
});
export type ProviderPreferences = z.infer<typeof providerPreferences>;

/** The preferences of the media and retrieval routes: chat's, plus settings passed to the provider of a slug untouched. */
export const providerPreferencesWithOptions = providerPreferences.extend({
  options: z.record(z.string(), jsonObject).optional().describe("Settings passed to the provider of that slug untouched"),
});

export const responseFormat = z.discriminatedUnion("type", [
  z.object({ type: z.literal("text") }),
  // Fireworks and Together constrain JSON mode with a schema beside the type.
  z.object({ type: z.literal("json_object"), schema: jsonObject.optional().describe("JSON Schema the answer follows, where the provider takes one") }),
  z.object({
    type: z.literal("json_schema"),
    json_schema: z.object({
      name: z.string().min(1).max(64),
      description: z.string().optional(),
      schema: jsonObject.optional(),
      strict: z.boolean().nullable().optional(),
    }),
  }),
  z.object({ type: z.literal("grammar"), grammar: z.string().min(1) }),
  z.object({ type: z.literal("python") }),
]);

/** Agent-loop stop conditions; the first one that fires halts the loop. */
/** OpenRouter's default and most server-tool agent steps of one request (`max_tool_calls`). */
export const defaultMaxToolSteps = 30;

export const stopCondition = z.discriminatedUnion("type", [
  z.object({ type: z.literal("step_count_is"), step_count: z.number().int().min(1) }),
  // Bounded as key and guardrail limits are, so the threshold converts to picodollars (see firedCondition).
  z.object({ type: z.literal("max_cost"), max_cost_in_dollars: z.number().positive().max(1e9, "must be at most 1000000000") }),
  z.object({ type: z.literal("max_tokens_used"), max_tokens: z.number().int().min(1) }),
  z.object({ type: z.literal("has_tool_call"), tool_name: z.string().min(1) }),
  z.object({ type: z.literal("finish_reason_is"), reason: z.string().min(1) }),
]);
export type StopCondition = z.infer<typeof stopCondition>;

export const chatPlugin = z.looseObject({
  id: z.string().min(1),
  enabled: z.boolean().optional(),
  allowed_models: z.array(z.string()).optional(),
  excluded_models: z.array(z.string()).optional(),
  cost_tier: z.enum(["low", "medium", "high", "xhigh", "max"]).optional(),
  pin_model: z.boolean().optional(),
});

/** The most choices one request may ask for (`n`), as OpenAI documents it. */
export const maxChoices = 128;

/** OpenAI's limits: at most 16 pairs, keys up to 64 characters, values up to 512. */
const requestMetadata = z
  .record(z.string().max(64, "metadata keys must be at most 64 characters"), z.string().max(512, "must be at most 512 characters"))
  .refine((pairs) => Object.keys(pairs).length <= 16, "must have at most 16 pairs");

/**
 * The parameters of a chat completion. Kept as a plain object so presets can reuse it; the request
 * schema adds the cross-field rules.
 */
export const chatCompletionParams = z.looseObject({
  messages: z.array(chatMessage).min(1, "must have at least 1 message"),
  model: modelId.optional(),
  models: z.array(modelId).optional().describe("Fallback models, tried in order"),
  route: z.enum(["fallback", "sort"]).nullable().optional().describe("Deprecated: use models / provider.sort"),
  max_tokens: positiveInt.describe("Deprecated: use max_completion_tokens"),
  max_completion_tokens: positiveInt,
  temperature: range(0, 2),
  top_p: range(0, 1),
  top_k: positiveInt,
  top_a: range(0, 1),
  min_p: range(0, 1),
  frequency_penalty: range(-2, 2),
  presence_penalty: range(-2, 2),
  repetition_penalty: z.number().gt(0, "must be greater than 0").max(2).nullable().optional(),
  logit_bias: z
    .record(z.string().regex(/^\d+$/, "logit_bias keys must be token ids"), z.number().min(-100).max(100))
    .nullable()
    .optional(),
  logprobs: z.boolean().nullable().optional(),
  top_logprobs: z.number().int().min(0).max(20).nullable().optional(),
  seed: z.number().int().nullable().optional(),
  n: z.number().int().min(1).max(maxChoices).nullable().optional().describe(`Choices to generate, 1 to ${maxChoices}; each is charged`),
  stop: z
    .union([z.string(), z.array(z.string()).max(4, "must have at most 4 stop sequences")])
    .nullable()
    .optional(),
  stream: z
    .boolean()
    .nullable()
    .optional()
    .transform((stream) => stream === true),
  stream_options: z.object({ include_usage: z.boolean().optional() }).nullable().optional(),
  metadata: requestMetadata.nullable().optional(),
  session_id: sessionId.optional(),
  reasoning: reasoningConfig.optional(),
  reasoning_effort: reasoningEffort.nullable().optional(),
  include_reasoning: z.boolean().optional().describe("Legacy: false hides reasoning from the answer, as reasoning.exclude does"),
  max_tool_calls: z
    .number()
    .int()
    .min(0)
    .max(defaultMaxToolSteps, `must be at most ${defaultMaxToolSteps} agent steps`)
    .optional()
    .describe(`Server-tool agent steps the model may take; ${defaultMaxToolSteps} by default, which is also the most`),
  stop_server_tools_when: z.array(stopCondition).min(1, "must have at least 1 condition").optional(),
  service_tier: serviceTier.nullable().optional(),
  provider: providerPreferences.nullable().optional(),
  response_format: responseFormat.optional(),
  prediction: z
    .object({ type: z.literal("content"), content: z.union([z.string(), z.array(textPart)]) })
    .nullable()
    .optional(),
  modalities: z.array(z.enum(["text", "image", "audio"])).nullable().optional(),
  image_config: jsonObject.optional().describe("Provider-specific image options, e.g. aspect_ratio, quality"),
  tools: z.array(chatTool).optional(),
  tool_choice: toolChoice.optional(),
  parallel_tool_calls: z.boolean().nullable().optional(),
  plugins: z.array(chatPlugin).optional(),
  cache_control: cacheControl.optional(),
  prompt_cache_key: z.string().nullable().optional(),
  prompt_cache_options: z
    .object({ mode: z.literal("explicit"), ttl: z.string().nullable().optional() })
    .nullable()
    .optional(),
  debug: z.object({ echo_upstream_body: z.boolean().optional() }).optional().describe("Streaming only"),
  trace: traceConfig.optional(),
  user: z.string().optional().describe("End-user id for abuse isolation; never forwarded raw"),
});

/** `reasoning_effort` is shorthand for `reasoning.effort`; both may be set only when they agree. */
export function checkReasoningEffort(
  request: { reasoning_effort?: ReasoningEffort | null; reasoning?: { effort?: ReasoningEffort | null } },
  ctx: z.RefinementCtx,
): void {
  const shorthand = request.reasoning_effort;
  const nested = request.reasoning?.effort;
  if (shorthand != null && nested != null && shorthand !== nested) {
    ctx.addIssue({
      code: "custom",
      path: ["reasoning_effort"],
      message: `conflicts with reasoning.effort (${nested}); set one or make them equal`,
    });
  }
}

/** `POST /chat/completions` body; unknown top-level fields pass through to providers. */
export const chatCompletionRequest = chatCompletionParams.superRefine(checkReasoningEffort);
export type ChatCompletionRequest = z.infer<typeof chatCompletionRequest>;
export type ChatCompletionRequestInput = z.input<typeof chatCompletionRequest>;
