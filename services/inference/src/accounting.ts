import type { ChatUsage, ContentFilterFinding, FinishReason, OpenRouterMetadata } from "@switchyard/contracts";
import { picoToUsd } from "@switchyard/runtime";
import { costOf, estimateTokens, type Cost } from "./cost.js";
import type { UpstreamUsage } from "./providers/types.js";
import { chargedPricing } from "./spend/pricing.js";
import type { Candidate, Charge } from "@switchyard/upstream";

const finishReasons = new Set<FinishReason>(["stop", "length", "tool_calls", "content_filter", "error"]);

const nativeReasons: Record<string, FinishReason> = {
  max_tokens: "length",
  MAX_TOKENS: "length",
  length_limit: "length",
  // Anthropic's: the answer stopped because the context window filled up.
  model_context_window_exceeded: "length",
  function_call: "tool_calls",
  tool_use: "tool_calls",
  refusal: "content_filter",
  SAFETY: "content_filter",
  RECITATION: "content_filter",
  BLOCKLIST: "content_filter",
  PROHIBITED_CONTENT: "content_filter",
  SPII: "content_filter",
  IMAGE_SAFETY: "content_filter",
  IMAGE_PROHIBITED_CONTENT: "content_filter",
  IMAGE_RECITATION: "content_filter",
};

/** Providers say `end_turn`, `max_tokens`, `SAFETY`…; clients get the spec's set, and the native one too. */
export function normalizeFinishReason(native: unknown): FinishReason | null {
  if (native === null || native === undefined) return null;
  const value = String(native);
  if (finishReasons.has(value as FinishReason)) return value as FinishReason;
  return nativeReasons[value] ?? "stop";
}

export interface Priced {
  usage: UpstreamUsage;
  estimated: boolean;
  /** The usage at the endpoint's prices, before the cap at the hold. */
  cost: Cost;
  /**
   * What prompt caching saved: the prompt at the prompt price less what it was charged (negative when cache
   * writes cost more than they saved). Null or absent where no prompt token was read from or written to a cache.
   */
  cacheDiscount?: bigint | null;
}

export interface Accounted extends Priced {
  /** What the key is charged: `cost.total`, capped at the worst case held for the generation. */
  charge: Charge;
  /** Served with the workspace's own key (BYOK): the charge counts as BYOK usage and the gateway bills none of it. */
  isByok: boolean;
  /** What the gateway bills: the charge of what was not BYOK. */
  billed: bigint;
}

/** What a generation answered: its words, its reasoning and its tool calls' names and arguments. */
export interface AnswerText {
  completionText: string;
  reasoningText?: string | undefined;
  toolCallText?: string | undefined;
}

/**
 * The answer's tokens estimated from all the model wrote, for a provider that reported none: a stream cut
 * while the model was thinking or writing a tool call's arguments was real work too. The reasoning is a
 * share of the completion, priced as reasoning.
 */
export function estimatedAnswer(answer: AnswerText): { completionTokens: number; reasoningTokens: number } {
  const reasoningTokens = estimateTokens(answer.reasoningText ?? "");
  return { completionTokens: estimateTokens(answer.completionText) + reasoningTokens + estimateTokens(answer.toolCallText ?? ""), reasoningTokens };
}

/**
 * Counts what the provider reported, or estimates it from the text (the prompt's is built only then), then
 * prices it with the one function, at the long-context prices when those prompt tokens are above the
 * endpoint's threshold and at the service tier's prices when it was served at one priced apart.
 */
export function account(candidate: Candidate, reported: UpstreamUsage | undefined, promptText: () => string, answer: AnswerText, tier?: string): Priced {
  const usage = reported ?? { promptTokens: estimateTokens(promptText()), ...estimatedAnswer(answer), cachedTokens: 0, cacheWriteTokens: 0 };
  const p = chargedPricing(candidate.endpoint, tier, usage.promptTokens);
  const cost = costOf(
    {
      prompt: p.prompt ?? "0",
      completion: p.completion ?? "0",
      ...(p.request !== undefined ? { request: p.request } : {}),
      ...(p.input_cache_read !== undefined ? { input_cache_read: p.input_cache_read } : {}),
      ...(p.input_cache_write !== undefined ? { input_cache_write: p.input_cache_write } : {}),
      ...(p.input_cache_write_1h !== undefined ? { input_cache_write_1h: p.input_cache_write_1h } : {}),
      ...(p.internal_reasoning !== undefined ? { internal_reasoning: p.internal_reasoning } : {}),
      ...(p.audio !== undefined ? { audio: p.audio } : {}),
      ...(p.audio_output !== undefined ? { audio_output: p.audio_output } : {}),
    },
    {
      prompt: usage.promptTokens,
      completion: usage.completionTokens,
      cachedPrompt: usage.cachedTokens,
      cacheWritePrompt: usage.cacheWriteTokens,
      cacheWrite1hPrompt: usage.cacheWrite1hTokens ?? 0,
      reasoning: usage.reasoningTokens,
      audioPrompt: usage.audioTokens ?? 0,
      audioCompletion: usage.audioOutputTokens ?? 0,
    },
  );
  const cachePriced = usage.cachedTokens > 0 || usage.cacheWriteTokens > 0;
  // The prompt as it would cost uncached: its audio tokens at the audio price, the rest at the prompt price.
  const uncached = () => costOf({ prompt: p.prompt ?? "0", completion: "0", ...(p.audio !== undefined ? { audio: p.audio } : {}) }, { prompt: usage.promptTokens, completion: 0, audioPrompt: usage.audioTokens ?? 0 });
  const cacheDiscount = cachePriced ? uncached().prompt - cost.prompt : null;
  return { usage, estimated: reported === undefined, cost, cacheDiscount };
}

export function usageBody(a: Accounted): ChatUsage {
  return {
    prompt_tokens: a.usage.promptTokens,
    completion_tokens: a.usage.completionTokens,
    total_tokens: a.usage.promptTokens + a.usage.completionTokens,
    prompt_tokens_details: {
      cached_tokens: a.usage.cachedTokens,
      ...(a.usage.cacheWriteTokens ? { cache_write_tokens: a.usage.cacheWriteTokens } : {}),
      ...(a.usage.audioTokens ? { audio_tokens: a.usage.audioTokens } : {}),
    },
    completion_tokens_details: { reasoning_tokens: a.usage.reasoningTokens, ...(a.usage.audioOutputTokens ? { audio_tokens: a.usage.audioOutputTokens } : {}) },
    // What the gateway bills (nothing for BYOK); the details say what the reported usage came to, which is
    // more when it was capped, and what the provider charged the workspace's own key.
    cost: picoToUsd(a.billed),
    cost_details: {
      upstream_inference_prompt_cost: picoToUsd(a.cost.prompt),
      upstream_inference_completions_cost: picoToUsd(a.cost.completion),
      upstream_inference_cost: picoToUsd(a.cost.total),
    },
    is_byok: a.isByok,
    server_tool_use_details: { tool_calls_requested: 0, tool_calls_executed: 0 },
  };
}

export interface MetadataInput {
  requested: string;
  candidates: readonly Candidate[];
  selected: Candidate;
  /** What chose the candidates' order. */
  basis: string | null;
  attempt: number;
  generationTimeMs: number;
  region: string | null;
  /** Parameters the serving endpoint does not support, dropped from its request. */
  dropped: string[];
  /** What the guardrails' content filters redacted or flagged in the prompt. */
  contentFilters?: ContentFilterFinding[];
}

/** The figures an endpoint was ordered by, as `openrouter_metadata` shows them beside it. */
const figuresOf = (c: Candidate) => ({
  latency_p50: c.figures?.latency?.p50 ?? null,
  throughput_p50: c.figures?.throughput?.p50 ?? null,
  uptime_last_5m: c.figures?.uptime5m ?? null,
});

export function metadataBody(m: MetadataInput): OpenRouterMetadata {
  return {
    attempt: m.attempt,
    endpoints: {
      total: m.candidates.length,
      available: m.candidates.map((c) => ({ model: c.model, provider: c.endpoint.provider, selected: c === m.selected, ...figuresOf(c) })),
    },
    generation_time: m.generationTimeMs,
    is_byok: m.selected.byokKey !== undefined,
    region: m.region,
    requested: m.requested,
    strategy: m.attempt > 1 ? "fallback" : "direct",
    summary:
      `${m.selected.model} via ${m.selected.endpoint.provider}` +
      (m.attempt > 1 ? ` after ${m.attempt - 1} failed attempt(s)` : "") +
      (m.basis ? `; order: ${m.basis}` : "") +
      (m.dropped.length ? `; unsupported parameters dropped: ${m.dropped.join(", ")}` : ""),
    ...(m.contentFilters?.length ? { content_filters: m.contentFilters } : {}),
  };
}
