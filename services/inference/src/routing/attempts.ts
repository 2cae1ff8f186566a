import { firstAccepting as tryInOrder, type Attempt, type AttemptContext, type AttemptSignal, type Candidate, type UpstreamTarget } from "@switchyard/upstream";
import { anthropic, anthropicMessages } from "../providers/anthropic.js";
import { google } from "../providers/google.js";
import { openAi, openAiCompatible } from "../providers/openai-compatible.js";
import { openAiResponses } from "../providers/openai-responses.js";
import { openAiText } from "../providers/openai-text.js";
import type { ChatProvider } from "../providers/types.js";
import { responsesCannotCarry } from "../providers/openai-responses-request.js";
import type { Dialect } from "../generation/plan.js";

/**
 * The upstream API a request prefers where an endpoint speaks it: Chat Completions everywhere; OpenAI's
 * Responses API on OpenAI's own endpoints (`responses`); the legacy text completions on OpenAI-compatible
 * ones (`text`); Anthropic's Messages API, with the client's own body, on Anthropic's (`messages`).
 * Endpoints without the preferred API get Chat Completions' translation to their own.
 */
export type Wire = "chat" | "responses" | "text" | "messages";

const chat: Record<string, ChatProvider> = { openai: openAi, "openai-compatible": openAiCompatible, anthropic, google };

const byWire: Record<Wire, Record<string, ChatProvider>> = {
  chat,
  responses: { ...chat, openai: openAiResponses },
  text: { ...chat, openai: openAiText, "openai-compatible": openAiText },
  messages: { ...chat, anthropic: anthropicMessages },
};

/**
 * The wire a dialect's request prefers when it brings no wire of its own: a Responses request whose body
 * OpenAI's Responses API cannot carry (a sampling parameter it lacks, a part it has no place for) keeps to
 * Chat Completions there.
 */
export function wireFor(dialect: Dialect, body: Record<string, unknown>): Wire {
  if (dialect === "responses" && responsesCannotCarry(body).length === 0) return "responses";
  return "chat";
}

/** Whether an adapter takes a dialect's own body (the prompt as it was, the Messages body) rather than a chat translation. */
export const speaksOwnBody = (provider: ChatProvider): boolean => provider === openAiText || provider === anthropicMessages;

/**
 * What a chat body asks for that an endpoint's adapter would leave out of its wire request (see
 * `ChatProvider.leftOut`); nothing where the adapter takes the dialect's own body.
 */
export function leftOutBy(wire: Wire, adapter: string, body: Record<string, unknown>): string[] {
  const provider = byWire[wire][adapter];
  return provider && !speaksOwnBody(provider) ? (provider.leftOut?.(body) ?? []) : [];
}

/** Whether an endpoint's adapter has the wire's own API. */
export const hasOwnApi = (wire: Wire, adapter: string): boolean => byWire[wire][adapter] !== chat[adapter];

export const firstAccepting = <T>(
  wire: Wire,
  candidates: readonly Candidate[],
  context: AttemptContext,
  attempts: Attempt[],
  call: (provider: ChatProvider, target: UpstreamTarget, candidate: Candidate, attempt: AttemptSignal) => Promise<T>,
) => tryInOrder(byWire[wire], candidates, context, attempts, call);
