import type { ServerToolCallDetail } from "@switchyard/contracts";
import type { Accounted } from "../../accounting.js";
import { normalizeFinishReason } from "../../accounting.js";
import type { CompletionChoice, Passthrough } from "../../generation/parts.js";
import { nativeContentField } from "../../providers/anthropic.js";
import type { Detail } from "../../tools/reasoning.js";
import type { ToolCall } from "../../tools/run.js";
import { objectOf } from "../../json.js";
import { wrapReasoning } from "./request.js";
import { serverCallBlocks } from "./server-calls.js";

type Json = Record<string, unknown>;

/** What every message names: its id (the generation's) and the model that served. */
export interface MessageFrame {
  id: string;
  model: string;
  /** `thinking.display: "omitted"`: thinking blocks the gateway writes carry their signatures, not their text. */
  omitThinking?: boolean;
}

/** The stop reasons Anthropic's API gives, which pass as they are. */
const anthropicStops = new Set(["end_turn", "max_tokens", "stop_sequence", "tool_use", "pause_turn", "refusal", "model_context_window_exceeded"]);
const fromChat: Record<string, string> = { stop: "end_turn", length: "max_tokens", tool_calls: "tool_use", content_filter: "refusal" };

/** A provider's finish reason as Anthropic's `stop_reason`: its own where it gave one, else the translation of the gateway's. */
export function stopReason(native: string | null): string {
  if (native && anthropicStops.has(native)) return native;
  return fromChat[normalizeFinishReason(native) ?? "stop"] ?? "end_turn";
}

/**
 * Usage as Anthropic counts it in `message_delta`: `input_tokens` are the prompt tokens neither read from nor
 * written to the cache, which are counted apart.
 */
export function usageOf(usage: Accounted["usage"]) {
  return {
    input_tokens: Math.max(0, usage.promptTokens - usage.cachedTokens - usage.cacheWriteTokens),
    output_tokens: usage.completionTokens,
    cache_creation_input_tokens: usage.cacheWriteTokens,
    cache_read_input_tokens: usage.cachedTokens,
  };
}

/** A message's usage (the answer's, `message_start`'s): `usageOf` and the cache writes split by how long they last. */
export function messageUsage(usage: Accounted["usage"]) {
  const hour = Math.min(usage.cacheWrite1hTokens ?? 0, usage.cacheWriteTokens);
  return { ...usageOf(usage), cache_creation: { ephemeral_5m_input_tokens: usage.cacheWriteTokens - hour, ephemeral_1h_input_tokens: hour } };
}

/**
 * A reasoning entry as Anthropic's block: thinking with its signature, or redacted thinking for encrypted
 * reasoning; another provider's signature or data carries its format (`wrapReasoning`). Summaries have no place.
 */
export function thinkingBlock(detail: Detail): Json | undefined {
  if (detail.type === "reasoning.text") {
    const signature = typeof detail.signature === "string" && detail.signature ? wrapReasoning(detail, detail.signature) : "";
    return { type: "thinking", thinking: typeof detail.text === "string" ? detail.text : "", signature };
  }
  if (detail.type === "reasoning.encrypted" && typeof detail.data === "string") return { type: "redacted_thinking", data: wrapReasoning(detail, detail.data) };
  return undefined;
}

/** What an OpenAI-compatible endpoint said in refusing (`refusal` beside its content); empty when it did not. */
export const refusalOf = (fields: Passthrough): string => (typeof fields.refusal === "string" ? fields.refusal : "");

/**
 * An Anthropic endpoint's content blocks as it sent them (`nativeContentField`), when the gateway's reading of
 * them still stands: the answer's text is theirs (response healing did not rewrite it).
 */
function nativeBlocks(choice: CompletionChoice): Json[] | undefined {
  const blocks = choice.fields[nativeContentField];
  if (!Array.isArray(blocks)) return undefined;
  const said = blocks.map((b) => (typeof b === "object" && b !== null && !Array.isArray(b) && b.type === "text" && typeof b.text === "string" ? b.text : "")).join("");
  return said === (choice.text ?? "") ? (blocks as Json[]) : undefined;
}

/**
 * A thinking block as `thinking.display: "omitted"` asks, as Anthropic answers it: its signature without its
 * text. A block without a signature would carry nothing, so it is left out. Other blocks are as they are.
 */
export function omitted(block: Json): Json | undefined {
  if (block.type !== "thinking") return block;
  return block.signature ? { ...block, thinking: "" } : undefined;
}

/**
 * A buffered choice's content blocks: an Anthropic endpoint's own, in its order; else reasoning (its text left
 * out when `omitThinking`), server tool calls the gateway ran, words (a refusal's too), then the client's tool calls.
 */
export function contentBlocks(choice: CompletionChoice | undefined, serverCalls: readonly ServerToolCallDetail[] = [], omitThinking = false): Json[] {
  if (!choice) return [];
  const native = serverCalls.length === 0 ? nativeBlocks(choice) : undefined;
  if (native) return native;
  const thinking: Json[] = [];
  for (const detail of choice.reasoningDetails) {
    const block = thinkingBlock(detail);
    if (block) thinking.push(block);
  }
  if (thinking.length === 0 && choice.reasoning) thinking.push({ type: "thinking", thinking: choice.reasoning, signature: "" });
  const blocks = omitThinking ? thinking.map(omitted).filter((b): b is Json => b !== undefined) : thinking;
  for (const call of serverCalls) blocks.push(...serverCallBlocks(call));
  if (choice.text) blocks.push({ type: "text", text: choice.text });
  const refusal = refusalOf(choice.fields);
  if (refusal) blocks.push({ type: "text", text: refusal });
  for (const call of choice.toolCalls) blocks.push(toolUseBlock(call));
  return blocks;
}

export const toolUseBlock = (call: ToolCall): Json => ({ type: "tool_use", id: call.id, name: call.function.name, input: objectOf(call.function.arguments) });

/** The `message` object of a buffered answer; a refusal's stop reason is `refusal`. */
export function messageBody(frame: MessageFrame, choice: CompletionChoice | undefined, accounted: Accounted, extra: { serverCalls?: readonly ServerToolCallDetail[]; finishReason?: string | null; metadata?: Json } = {}): Json {
  const finishReason = extra.finishReason !== undefined ? extra.finishReason : (choice?.finishReason ?? null);
  return {
    id: frame.id,
    type: "message",
    role: "assistant",
    model: frame.model,
    content: contentBlocks(choice, extra.serverCalls, frame.omitThinking),
    stop_reason: choice && refusalOf(choice.fields) ? "refusal" : stopReason(finishReason),
    stop_sequence: choice?.stopSequence ?? null,
    usage: messageUsage(accounted.usage),
    ...extra.metadata,
  };
}
