import type { CompletionChoice, Json, Passthrough, StreamPart } from "../generation/parts.js";
import type { Detail } from "../tools/reasoning.js";
import type { ToolCall } from "../tools/run.js";
import { isObject } from "../json.js";

/** The fields of an OpenAI-shaped message or delta the gateway reads; the rest pass through. */
const interpreted = new Set(["content", "reasoning", "reasoning_details", "tool_calls"]);

type Fields = Record<string, unknown>;


/** The fields of `source` not in `except`, as JSON. */
function passthrough(source: Fields, except: ReadonlySet<string>): Passthrough {
  const out: Record<string, Json> = {};
  for (const [key, value] of Object.entries(source)) if (!except.has(key) && value !== undefined) out[key] = value as Json;
  return out;
}

const details = (value: unknown): Detail[] => (Array.isArray(value) ? value.filter((d): d is Detail => isObject(d) && typeof d.type === "string") : []);

const choiceKeys = new Set(["index", "message", "delta", "finish_reason"]);

/**
 * The field of a reasoning entry that only the provider of its format may be sent: a dialect whose reasoning
 * goes back to its own provider alone (the Responses API's reasoning items) sets it true. The adapters of
 * Anthropic, Gemini and OpenAI's Responses API rebuild their blocks from the entries of their own format, so
 * the field never reaches a provider; an OpenAI-compatible endpoint is sent none of these entries, unless it
 * is a router that relays them (`withReasoningRelayed`).
 */
export const ownProviderOnly = "own_provider_only";

const bound = (detail: unknown): boolean => isObject(detail) && detail[ownProviderOnly] === true;

/**
 * The reasoning formats of the providers the gateway has adapters for: OpenAI's Responses API, Anthropic's
 * Messages API and Gemini. Each adapter reads back the entries of its own format alone.
 */
const providerFormats = new Set(["openai-responses-v1", "anthropic-claude-v1", "google-gemini-v1"]);

/**
 * The `format` field of a reasoning entry a client sent back, with `ownProviderOnly` when the format is a
 * provider's the gateway has an adapter for: such an entry goes back to that provider alone.
 */
export const formatFields = (format: string): Record<string, string | boolean> => ({ format, ...(providerFormats.has(format) ? { [ownProviderOnly]: true } : {}) });

/** OpenAI's `allowed_tools` tool choice's settings, or undefined for another choice. */
const allowedTools = (choice: unknown): Fields | undefined =>
  isObject(choice) && choice.type === "allowed_tools" && isObject(choice.allowed_tools) ? choice.allowed_tools : undefined;

/**
 * A body's function tools as a wire format without OpenAI's `allowed_tools` choice (Anthropic's, Gemini's)
 * declares them: only the functions such a choice allows, else every one.
 */
export function functionTools(body: Fields): Fields[] {
  const tools = (Array.isArray(body.tools) ? body.tools.filter(isObject) : []).filter((t) => t.type === "function" && isObject(t.function));
  const allowed = allowedTools(body.tool_choice);
  if (!allowed) return tools;
  const names = new Set((Array.isArray(allowed.tools) ? allowed.tools : []).flatMap((t: unknown) => (isObject(t) && isObject(t.function) ? [t.function.name] : [])));
  return tools.filter((t) => names.has((t.function as Fields).name));
}

/** A tool choice as such a wire format takes it: an `allowed_tools` choice as the plain one of its mode. */
export function plainToolChoice(choice: unknown): unknown {
  const allowed = allowedTools(choice);
  return allowed ? (allowed.mode === "required" ? "required" : "auto") : choice;
}

/** Whether a message holds reasoning entries bound to their own provider. */
const holds = (m: unknown): m is Fields & { reasoning_details: unknown[] } => isObject(m) && Array.isArray(m.reasoning_details) && m.reasoning_details.some(bound);

/** Whether an assistant message has words or calls once its reasoning is gone. */
const hasTurn = (message: Fields): boolean =>
  (typeof message.content === "string" && message.content !== "") ||
  (Array.isArray(message.content) && message.content.length > 0) ||
  (Array.isArray(message.tool_calls) && message.tool_calls.length > 0);

/**
 * A chat body without the reasoning entries bound to their own provider (`ownProviderOnly`), for an endpoint of
 * the Chat Completions format. An assistant message left with nothing to say (it held only that reasoning) is
 * left out too, rather than sent as an empty turn.
 */
export function withoutBoundReasoning(body: Fields): Fields {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  if (!messages.some(holds)) return body;
  const kept = messages.flatMap((m: unknown) => {
    if (!holds(m)) return [m];
    const { reasoning_details: details, ...rest } = m;
    const others = details.filter((d) => !bound(d));
    if (!others.length && !hasTurn(rest)) return [];
    return [others.length ? { ...rest, reasoning_details: others } : rest];
  });
  return { ...body, messages: kept };
}

/**
 * A chat body for a router that relays reasoning (`relays_reasoning`): every entry goes, without the
 * gateway's own mark.
 */
export function withReasoningRelayed(body: Fields): Fields {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  if (!messages.some(holds)) return body;
  const unmarked = (d: unknown) => (bound(d) ? Object.fromEntries(Object.entries(d as Fields).filter(([key]) => key !== ownProviderOnly)) : d);
  return { ...body, messages: messages.map((m: unknown) => (holds(m) ? { ...m, reasoning_details: m.reasoning_details.map(unmarked) } : m)) };
}

/** A string, or the text of the `{type: "text", text}` parts of an array; null where there is none. */
function partsText(value: unknown): string | null {
  if (typeof value === "string") return value;
  if (!Array.isArray(value)) return null;
  const texts = value.filter(isObject).flatMap((p) => (p.type === "text" && typeof p.text === "string" ? [p.text] : []));
  return texts.length ? texts.join("") : null;
}

/**
 * The words and the thinking of a message's `content`: a string is the words; of an array of parts, as Mistral's
 * reasoning models answer (`[{type: "thinking", thinking: [{type: "text", text}]}, {type: "text", text}]`),
 * text parts are the words and thinking parts the reasoning. Parts of other types (Mistral's `reference`
 * citations) have no place in a Chat Completions message and are left out. Null where there is none.
 */
function contentParts(content: unknown): { text: string | null; reasoning: string | null } {
  if (!Array.isArray(content)) return { text: typeof content === "string" ? content : null, reasoning: null };
  const parts = content.filter(isObject);
  const thinking = parts.flatMap((p) => (p.type === "thinking" ? [partsText(p.thinking)] : [])).filter((t): t is string => t !== null);
  return { text: partsText(parts), reasoning: thinking.length ? thinking.join("") : null };
}

/** A streamed `content` as parts, in its order: a string is text; of an array, text parts are text and thinking parts reasoning. */
function contentDelta(content: unknown, choice: number): StreamPart[] {
  if (typeof content === "string") return [{ type: "text", choice, text: content }];
  if (!Array.isArray(content)) return [];
  return content.filter(isObject).flatMap((p): StreamPart[] => {
    if (p.type === "text" && typeof p.text === "string") return [{ type: "text", choice, text: p.text }];
    const thinking = p.type === "thinking" ? partsText(p.thinking) : null;
    return thinking !== null ? [{ type: "reasoning", choice, text: thinking }] : [];
  });
}

/**
 * A provider's tool call as the gateway carries it: its `extra_content` (Google's OpenAI-compatible API puts
 * a call's thought signature there) stays on the call, for the client to send back.
 */
const callExtras = (call: Fields): { extra_content?: Json } => (isObject(call.extra_content) ? { extra_content: call.extra_content as Json } : {});

/** One buffered choice of an OpenAI-shaped answer, typed. */
export function chatChoice(choice: Fields, position: number): CompletionChoice {
  const message = isObject(choice.message) ? choice.message : {};
  const calls = Array.isArray(message.tool_calls) ? message.tool_calls.filter(isObject) : [];
  const toolCalls: ToolCall[] = calls.map((c, i) => {
    const fn = isObject(c.function) ? c.function : {};
    return {
      id: typeof c.id === "string" ? c.id : `call_${i}`,
      type: "function",
      function: { name: typeof fn.name === "string" ? fn.name : "", arguments: typeof fn.arguments === "string" ? fn.arguments : "" },
      ...callExtras(c),
    };
  });
  const content = contentParts(message.content);
  return {
    index: typeof choice.index === "number" ? choice.index : position,
    text: content.text,
    reasoning: typeof message.reasoning === "string" ? message.reasoning : content.reasoning,
    reasoningDetails: details(message.reasoning_details),
    toolCalls,
    finishReason: choice.finish_reason === undefined || choice.finish_reason === null ? null : String(choice.finish_reason),
    fields: passthrough(message, interpreted),
    choiceFields: passthrough(choice, choiceKeys),
  };
}

/**
 * One streamed OpenAI-shaped choice as parts. Every choice gives a `passthrough` part first, so a delta
 * with nothing the gateway reads (a role, logprobs, an empty delta) still frames a chunk of its own.
 * `started` holds the tool calls begun so far, by index.
 */
export function chatDeltaParts(choice: Fields, position: number, started: Set<string>): StreamPart[] {
  const index = typeof choice.index === "number" ? choice.index : position;
  const delta = isObject(choice.delta) ? choice.delta : {};
  const parts: StreamPart[] = [{ type: "passthrough", choice: index, fields: passthrough(delta, interpreted), choiceFields: passthrough(choice, choiceKeys) }];
  parts.push(...contentDelta(delta.content, index));
  if (typeof delta.reasoning === "string") parts.push({ type: "reasoning", choice: index, text: delta.reasoning });
  for (const detail of details(delta.reasoning_details)) parts.push({ type: "reasoning-detail", choice: index, detail });
  for (const [i, call] of (Array.isArray(delta.tool_calls) ? delta.tool_calls.filter(isObject) : []).entries()) {
    const callIndex = typeof call.index === "number" ? call.index : i;
    const fn = isObject(call.function) ? call.function : {};
    const key = `${index}:${callIndex}`;
    if (!started.has(key)) {
      started.add(key);
      const id = typeof call.id === "string" ? call.id : `call_${callIndex}`;
      const extra = callExtras(call).extra_content;
      parts.push({ type: "tool-call-start", choice: index, index: callIndex, id, name: typeof fn.name === "string" ? fn.name : "", ...(extra !== undefined ? { extraContent: extra } : {}) });
    }
    if (typeof fn.arguments === "string" && fn.arguments !== "") parts.push({ type: "tool-call-delta", choice: index, index: callIndex, arguments: fn.arguments });
  }
  if (choice.finish_reason !== undefined && choice.finish_reason !== null) {
    for (const key of started) if (key.startsWith(`${index}:`)) parts.push({ type: "tool-call-end", choice: index, index: Number(key.slice(key.indexOf(":") + 1)) });
    parts.push({ type: "finish", choice: index, reason: String(choice.finish_reason) });
  }
  return parts;
}
