import type { MessagesRequest } from "@switchyard/contracts";
import { madeFrom } from "@switchyard/runtime";
import type { IncomingHttpHeaders } from "node:http";
import type { OwnWire } from "../../generation/generation.js";
import { chatStopLimit } from "./request.js";

type Json = Record<string, unknown>;

/** Fields of a Messages request that steer the gateway and mean nothing to Anthropic. */
const gatewayOnly = new Set(["model", "models", "provider", "session_id", "trace", "plugins", "user", "stream", "cache_control", "metadata"]);

/** Sampling fields as the chat body names them, after presets and the endpoint's unsupported parameters. */
const sampling: ReadonlyArray<readonly [native: string, chat: string]> = [
  ["temperature", "temperature"],
  ["top_p", "top_p"],
  ["top_k", "top_k"],
  ["stop_sequences", "stop"],
];

/**
 * The stop sequences for Anthropic: all the client's where the chat form carries the first of them as it
 * does (`chatStopLimit`), else the chat form's (a preset's).
 */
function stopSequences(request: MessagesRequest, value: unknown): unknown {
  const sent = request.stop_sequences ?? [];
  const first = Array.isArray(value) && value.length === chatStopLimit && value.every((s, i) => s === sent[i]);
  return first && sent.length > chatStopLimit ? sent : typeof value === "string" ? [value] : value;
}

/**
 * A top-level `cache_control` as Anthropic reads a breakpoint: on the last block that can carry one. Only
 * that block is copied; everything before it stays the client's own.
 */
function markLast(messages: Json[], marker: Json): Json[] {
  const out: Json[] = [...messages];
  madeFrom(out, messages);
  const last = messages.at(-1);
  if (!last) return out;
  const blocks: Json[] = typeof last.content === "string" ? [{ type: "text", text: last.content }] : Array.isArray(last.content) ? [...(last.content as Json[])] : [];
  const at = blocks.findLastIndex((b) => b.type !== "thinking" && b.type !== "redacted_thinking");
  if (at >= 0 && !blocks[at]!.cache_control) blocks[at] = { ...blocks[at], cache_control: marker };
  out[out.length - 1] = { ...last, content: blocks };
  return out;
}

/**
 * The body an Anthropic endpoint gets for a Messages request: the client's own, so that `system`, `tools`
 * and the messages reach Anthropic exactly as sent and its prompt cache matches them. They are taken from
 * `sent`, the JSON as the client wrote it, not from its parse (which lists each object's keys in the schema's
 * order, not the client's). Only what the gateway decides is applied: the end user's id as the gateway
 * forwards it, sampling parameters the endpoint does not support dropped, a preset's settings, and a
 * top-level cache marker placed on the last block.
 */
export function nativeBody(request: MessagesRequest, sent: Json, chat: Json): Json {
  const body: Json = {};
  for (const [name, value] of Object.entries(sent)) if (!gatewayOnly.has(name) && value !== undefined) body[name] = value;
  for (const [native, ours] of sampling) {
    const value = chat[ours];
    if (value === undefined || value === null) delete body[native];
    else body[native] = native === "stop_sequences" ? stopSequences(request, value) : value;
  }
  body.max_tokens = chat.max_tokens ?? chat.max_completion_tokens ?? request.max_tokens;
  if (typeof chat.user === "string") body.metadata = { user_id: chat.user };
  const messages = Array.isArray(chat.messages) ? (chat.messages as Json[]) : [];
  // A preset's system prompt, when the client sent none.
  if (request.system === undefined && messages[0]?.role === "system") body.system = messages[0].content;
  if (request.cache_control) body.messages = markLast(Array.isArray(sent.messages) ? (sent.messages as Json[]) : [], request.cache_control);
  return body;
}

/** The Anthropic headers a client sends that Anthropic endpoints get too. */
export function anthropicHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of ["anthropic-version", "anthropic-beta"]) {
    const value = headers[name];
    if (typeof value === "string" && value) out[name] = value;
    else if (Array.isArray(value) && value.length) out[name] = value.join(",");
  }
  return out;
}

/** The Messages dialect's own wire: Anthropic endpoints get the client's body (`sent`, as it came) and headers. */
export const messagesWire = (request: MessagesRequest, sent: Json, headers: IncomingHttpHeaders): OwnWire => ({
  wire: "messages",
  body: (chat) => nativeBody(request, sent, chat),
  headers: anthropicHeaders(headers),
});
