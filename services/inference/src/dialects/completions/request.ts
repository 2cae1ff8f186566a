import type { CompletionsRequest } from "@switchyard/contracts";
import { isObject } from "../../json.js";

/**
 * Fields a legacy completions route takes as they are, from the chat body the endpoint would get (where
 * presets, dropped parameters and the hashed end user have had their say).
 */
const legacyFields = [
  "max_tokens",
  "temperature",
  "top_p",
  "top_k",
  "top_a",
  "min_p",
  "frequency_penalty",
  "presence_penalty",
  "repetition_penalty",
  "stop",
  "logit_bias",
  "seed",
  "response_format",
  "user",
] as const satisfies ReadonlyArray<keyof CompletionsRequest>;

/** Fields the normalised chat request takes from a completions request as they are: the legacy ones and the gateway's. */
const sharedFields = [...legacyFields, "model", "models", "metadata", "provider", "reasoning", "session_id", "trace", "transforms"] as const satisfies ReadonlyArray<keyof CompletionsRequest>;

/** Fields only the legacy route has, taken from the request itself. */
const textOnlyFields = ["n", "best_of", "echo", "logprobs"] as const satisfies ReadonlyArray<keyof CompletionsRequest>;

/** The request's one prompt as text (the schema allows a string or an array of one string). */
export function promptText(request: Pick<CompletionsRequest, "prompt">): string {
  const { prompt } = request;
  if (typeof prompt === "string") return prompt;
  const first = prompt[0];
  return typeof first === "string" ? first : "";
}

/** Copies the named fields that are set (neither undefined nor null) from `request` into `body`. */
function copySet(body: Record<string, unknown>, request: CompletionsRequest, fields: readonly (keyof CompletionsRequest)[]): void {
  for (const field of fields) {
    const value = request[field];
    if (value !== undefined && value !== null) body[field] = value;
  }
}

/** A suffix worth sending: one that is set and not empty. */
const hasSuffix = (request: CompletionsRequest): request is CompletionsRequest & { suffix: string } => typeof request.suffix === "string" && request.suffix !== "";

/**
 * The normalised chat request of a completions request, for routing, presets, guardrails and money, and
 * the body a chat-only endpoint receives: the prompt as one user message, the shared knobs as they are.
 * A suffix rides as a second message, so that the guardrails' filters and the spend hold see it as the
 * prompt text it is; only endpoints with a legacy route serve such a request (see `translationRefusals`),
 * and `legacyBody` turns it back into a suffix. `echo` and `logprobs` have no place in chat.
 */
export function toChatRequest(request: CompletionsRequest): Record<string, unknown> {
  const messages = [{ role: "user", content: promptText(request) }, ...(hasSuffix(request) ? [{ role: "user", content: request.suffix }] : [])];
  const chat: Record<string, unknown> = { messages };
  copySet(chat, request, sharedFields);
  chat.stream = request.stream === true;
  return chat;
}

type ChatMessage = { role?: unknown; content?: unknown };

const messagesOf = (chatBody: Readonly<Record<string, unknown>>): ChatMessage[] => (Array.isArray(chatBody.messages) ? (chatBody.messages as ChatMessage[]) : []);

/**
 * Whether the chat body holds a system message. `toChatRequest` makes none, so it is a preset's system prompt,
 * which the legacy wire has no place for: a prompt is sent as given, with nothing in front of it.
 */
export const carriesSystemPrompt = (chatBody: Readonly<Record<string, unknown>>): boolean => messagesOf(chatBody).some((m) => m.role === "system");

/** Why an endpoint's legacy completions route cannot serve a request whose preset has a system prompt. */
export const systemPromptRefusal = "system_prompt: a preset's system prompt has no place in a legacy completions prompt; only endpoints without a legacy completions route take it";

/**
 * The reasoning settings as a legacy route takes them: `reasoning`, as OpenRouter's `/completions` does (OpenAI's
 * and vLLM's have no field for them). A preset's `reasoning_effort` goes as its effort. They are in the chat
 * body only where the endpoint's `supported_parameters` allow them; elsewhere they were dropped and named.
 */
function reasoningOf(chatBody: Record<string, unknown>): unknown {
  if (isObject(chatBody.reasoning)) return chatBody.reasoning;
  return typeof chatBody.reasoning_effort === "string" ? { effort: chatBody.reasoning_effort } : undefined;
}

/**
 * The body an OpenAI-compatible endpoint's `/completions` receives, less `model` and `stream` (the adapter
 * sets them): made of the chat body that endpoint would get (so the guardrails' redactions, a preset's
 * defaults and the parameters it does not support are as for chat; the end user is already hashed), with
 * the prompt back as a prompt, the legacy route's own fields and the reasoning settings. The prompt is the
 * caller's alone: a system message is no part of it (see `carriesSystemPrompt`).
 */
export function legacyBody(request: CompletionsRequest, chatBody: Record<string, unknown>): Record<string, unknown> {
  const texts = messagesOf(chatBody)
    .filter((m) => m.role !== "system")
    .map((m) => (typeof m.content === "string" ? m.content : ""));
  const suffix = hasSuffix(request) ? texts.pop() : undefined;
  const body: Record<string, unknown> = { prompt: texts.join("\n\n"), ...(suffix !== undefined ? { suffix } : {}) };
  for (const field of legacyFields) if (chatBody[field] !== undefined && chatBody[field] !== null) body[field] = chatBody[field];
  copySet(body, request, textOnlyFields);
  const reasoning = reasoningOf(chatBody);
  if (reasoning !== undefined) body.reasoning = reasoning;
  return body;
}

/**
 * The fields a translation to a chat-only endpoint would lose: `suffix` (chat has no insertion point) and
 * `logprobs` (chat's per-token entries are another shape, without text offsets). `echo` is not among them:
 * the gateway prepends the prompt itself. The core skips endpoints that cannot carry these, and answers
 * 400 naming them when none is left.
 */
export function translationRefusals(request: CompletionsRequest): string[] {
  const refused: string[] = [];
  if (hasSuffix(request)) refused.push("suffix");
  if (typeof request.logprobs === "number") refused.push("logprobs");
  return refused;
}
