import type { Detail } from "../tools/reasoning.js";
import type { ToolCall } from "../tools/run.js";

/** Tokens as a provider reported them. */
export interface UpstreamUsage {
  promptTokens: number;
  completionTokens: number;
  /** Prompt tokens read from the provider's cache; part of promptTokens. */
  cachedTokens: number;
  /** Prompt tokens written to the provider's cache; part of promptTokens. */
  cacheWriteTokens: number;
  /** Of those, the ones kept an hour (Anthropic's `ttl: "1h"`), where the provider says. */
  cacheWrite1hTokens?: number;
  reasoningTokens: number;
  /** Prompt tokens of audio, where the provider counts them apart; part of promptTokens. */
  audioTokens?: number;
  /** Completion tokens of audio (a spoken answer), where the provider counts them apart; part of completionTokens. */
  audioOutputTokens?: number;
}

/** A JSON value as a provider sent it. */
export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

/**
 * Fields of a provider's message (or delta) the gateway does not interpret: `role`, `refusal`,
 * `annotations`, `audio`, `images`... Chat Completions relays them as they came; other dialects carry
 * what they have a place for.
 */
export type Passthrough = { readonly [field: string]: Json };

/**
 * What an adapter's stream says, one typed part at a time. Every part but `metadata` and `usage` belongs
 * to one choice (0 unless the request asked for several). Reasoning comes as its text and as the provider's
 * own entries (`reasoning_details`: thinking blocks with their signatures, summaries, encrypted data), which
 * a later turn must send back whole. A failure is thrown by the stream, not sent as a part.
 */
export type StreamPart =
  | {
      type: "metadata";
      /** The provider's id of its answer (a chunk's `id`, Anthropic's message id, Gemini's `responseId`): the record's `upstream_id`. */
      id?: string | null;
      systemFingerprint?: string | null;
      serviceTier?: string | null;
      /** The prompt's tokens as the provider counts them when its answer starts (Anthropic's `message_start`); the whole usage comes last. */
      promptUsage?: UpstreamUsage;
    }
  | { type: "text"; choice: number; text: string }
  | { type: "reasoning"; choice: number; text: string }
  | { type: "reasoning-detail"; choice: number; detail: Detail }
  | { type: "tool-call-start"; choice: number; index: number; id: string; name: string; /** The call's `extra_content`, where the provider sent one. */ extraContent?: Json }
  | { type: "tool-call-delta"; choice: number; index: number; arguments: string }
  | { type: "tool-call-end"; choice: number; index: number }
  | { type: "passthrough"; choice: number; fields: Passthrough; choiceFields?: Passthrough }
  | { type: "finish"; choice: number; reason: string; /** The stop sequence that ended it, where the provider says. */ stopSequence?: string }
  | { type: "usage"; usage: UpstreamUsage };

/**
 * The parts of one provider event, in order. Renderers that frame output per event (Chat Completions'
 * chunks) keep the provider's framing; the others read the parts one by one.
 */
export type PartBatch = readonly StreamPart[];

/** One choice of a buffered answer, whole. */
export interface CompletionChoice {
  index: number;
  /** Null when the provider sent no text (a turn of tool calls only). */
  text: string | null;
  reasoning: string | null;
  reasoningDetails: Detail[];
  toolCalls: ToolCall[];
  /** The provider's own finish reason, normalised by renderers. */
  finishReason: string | null;
  /** The stop sequence that ended it, where the provider says. */
  stopSequence?: string;
  /** The message's fields the gateway does not interpret, and the choice's (`logprobs`). */
  fields: Passthrough;
  choiceFields: Passthrough;
}

/** A buffered answer, whole. */
export interface Completion {
  id: string | null;
  choices: CompletionChoice[];
  usage: UpstreamUsage | undefined;
  systemFingerprint: string | null;
  serviceTier: string | null;
}
