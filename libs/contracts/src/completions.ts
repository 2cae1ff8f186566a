import { z } from "zod";
import { chatCompletionParams, responseFormat } from "./chat-request.js";
import { chatUsage, openRouterMetadata } from "./chat-response.js";

/*
 * The legacy text completions dialect, `POST /completions`: one prompt in, text out.
 *
 * - One prompt per request: a string, or an array holding one string. Several prompts are refused, because
 *   the gateway's normalised request (routing, presets, guardrails, spend holds) carries one conversation.
 * - Token-id prompts (arrays of numbers) are refused: guardrails cannot read them and a chat-only endpoint
 *   cannot carry them.
 * - `n` and `best_of` may only be 1: spend holds reserve one completion per request.
 * - Unknown top-level fields are refused, naming them.
 */

/** The chat parameters legacy completions share as they are: the same limits, nulls accepted as OpenAI's SDK sends them. */
const chat = chatCompletionParams.shape;

/** The most logprobs a legacy completion may ask for, as OpenAI and OpenRouter document it. */
export const maxLegacyLogprobs = 5;

/** A prompt of token ids, which the gateway refuses. */
const tokenIds = z.array(z.number());

/** A prompt as the wire may carry it; `checkPrompt` narrows it to one text prompt. */
const promptInput = z.union([z.string(), z.array(z.string()), tokenIds, z.array(tokenIds)]);

/** Refuses token-id prompts and more (or fewer) than one prompt. */
function checkPrompt(prompt: z.infer<typeof promptInput>, ctx: z.RefinementCtx): void {
  if (typeof prompt === "string") return;
  if (prompt.some((item) => typeof item !== "string")) {
    ctx.addIssue({ code: "custom", message: "token-id prompts are not supported; send the prompt as text" });
    return;
  }
  if (prompt.length !== 1) {
    ctx.addIssue({ code: "custom", message: "must be one prompt: a string, or an array of exactly one string; send one request per prompt" });
  }
}

/** `n` and `best_of` beyond 1 are refused: spend holds reserve one completion per request. */
const onlyOne = z.number().int().min(1).max(1, "only 1 is supported; send one request per completion").nullable().optional();

/** `POST /completions` body; unknown top-level fields are refused. */
export const completionsRequest = z.strictObject({
  model: chat.model,
  models: chat.models,
  prompt: promptInput
    .superRefine(checkPrompt)
    .describe("The text to continue: a string, or an array of one string (several prompts and token ids are refused)"),
  suffix: z.string().nullable().optional().describe("Text that follows the insertion point; only endpoints with a legacy completions route take it"),
  max_tokens: chat.max_completion_tokens,
  temperature: chat.temperature,
  top_p: chat.top_p,
  top_k: chat.top_k,
  top_a: chat.top_a,
  min_p: chat.min_p,
  frequency_penalty: chat.frequency_penalty,
  presence_penalty: chat.presence_penalty,
  repetition_penalty: chat.repetition_penalty,
  n: onlyOne,
  best_of: onlyOne,
  stream: z.boolean().nullable().default(false),
  stream_options: z.object({ include_usage: z.boolean().nullable().optional() }).nullable().optional(),
  stop: z
    .union([z.string(), z.array(z.string())])
    .refine((stop) => typeof stop === "string" || stop.length <= 4, "must have at most 4 stop sequences")
    .nullable()
    .optional(),
  echo: z.boolean().nullable().optional().describe("Prepends the prompt to the completion's text"),
  logprobs: z
    .number()
    .int()
    .min(0)
    .max(maxLegacyLogprobs)
    .nullable()
    .optional()
    .describe("Log probabilities of this many most likely tokens per position; only endpoints with a legacy completions route take it"),
  logit_bias: chat.logit_bias,
  seed: chat.seed,
  response_format: responseFormat.nullable().optional(),
  user: chat.user,
  metadata: chat.metadata.unwrap().nullable().optional(),
  provider: chat.provider,
  reasoning: chat.reasoning,
  session_id: chat.session_id,
  trace: chat.trace,
  transforms: z.array(z.string()).optional().describe("middle-out compresses a prompt too long for the context window"),
});
export type CompletionsRequest = z.infer<typeof completionsRequest>;
export type CompletionsRequestInput = z.input<typeof completionsRequest>;

/** A legacy completion's finish reasons; providers' own travel in `native_finish_reason`. */
export const textFinishReason = z.enum(["stop", "length", "content_filter"]);
export type TextFinishReason = z.infer<typeof textFinishReason>;

/**
 * Legacy log probabilities: one entry per token. With `echo` the prompt's first token has no logprob, so
 * its entries are null.
 */
export const textLogprobs = z.looseObject({
  tokens: z.array(z.string()).optional(),
  token_logprobs: z.array(z.number().nullable()).optional(),
  top_logprobs: z.array(z.record(z.string(), z.number()).nullable()).nullable().optional(),
  text_offset: z.array(z.number()).optional(),
});
export type TextLogprobs = z.infer<typeof textLogprobs>;

/** Usage as on chat completions, with the completion's details legacy clients read (reasoning tokens). */
export const textUsage = chatUsage.extend({ completion_tokens_details: z.object({ reasoning_tokens: z.number().int().min(0) }) });
export type TextUsage = z.infer<typeof textUsage>;

const choiceBase = {
  text: z.string(),
  index: z.number().int().min(0),
  logprobs: textLogprobs.nullable(),
  native_finish_reason: z.string().nullable().optional(),
  reasoning: z.string().nullable().optional().describe("The model's reasoning, when it reasoned and the request does not hide it"),
};

/** Non-streaming `POST /completions` 200 body. */
export const textCompletion = z.object({
  id: z.string(),
  object: z.literal("text_completion"),
  created: z.number().int().describe("Unix timestamp"),
  model: z.string(),
  provider: z.string().optional().describe("The provider that served the completion"),
  system_fingerprint: z.string().optional(),
  choices: z.array(z.object({ ...choiceBase, finish_reason: textFinishReason })),
  usage: textUsage,
  openrouter_metadata: openRouterMetadata.optional(),
});
export type TextCompletion = z.infer<typeof textCompletion>;

/**
 * One SSE `data:` frame of a streamed completion: a `text_completion` object too. Choices carry the text
 * since the last frame; the last frame has no choices and the whole usage. A stream that fails after its
 * first byte ends with one frame whose choice finishes with `error`, and a top-level `error`.
 */
export const textCompletionChunk = z.object({
  id: z.string(),
  object: z.literal("text_completion"),
  created: z.number().int(),
  model: z.string(),
  provider: z.string().optional(),
  system_fingerprint: z.string().optional(),
  choices: z.array(z.object({ ...choiceBase, finish_reason: z.union([textFinishReason, z.literal("error")]).nullable() })),
  usage: textUsage.optional(),
  openrouter_metadata: openRouterMetadata.optional(),
  error: z
    .object({ code: z.number().int(), message: z.string() })
    .optional()
    .describe("Set on the one frame sent when the stream fails after its first byte"),
});
export type TextCompletionChunk = z.infer<typeof textCompletionChunk>;
