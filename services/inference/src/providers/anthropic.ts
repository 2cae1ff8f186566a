import { z } from "zod";
import { messagesRequest } from "./anthropic-messages.js";
import { postJson, postJsonAnswer, sseData, type JsonPost } from "@switchyard/upstream";
import type { CompletionChoice, PartBatch } from "../generation/parts.js";
import type { Detail } from "../tools/reasoning.js";
import type { ToolCall } from "../tools/run.js";
import { UpstreamError, type ChatProvider, type UpstreamTarget, type UpstreamUsage } from "./types.js";

const apiVersion = "2023-06-01";
const reasoningFormat = "anthropic-claude-v1";

const usage = z.looseObject({
  input_tokens: z.number().int().min(0).nullish(),
  output_tokens: z.number().int().min(0).nullish(),
  cache_read_input_tokens: z.number().int().min(0).nullish(),
  cache_creation_input_tokens: z.number().int().min(0).nullish(),
});
type Usage = z.infer<typeof usage>;

const contentBlock = z.looseObject({
  type: z.string(),
  text: z.string().optional(),
  id: z.string().optional(),
  name: z.string().optional(),
  input: z.unknown().optional(),
  thinking: z.string().optional(),
  signature: z.string().optional(),
  data: z.string().optional(),
});

const message = z.looseObject({
  id: z.string().nullish(),
  content: z.array(contentBlock).default([]),
  stop_reason: z.string().nullish(),
  usage: usage.nullish(),
});

const event = z.discriminatedUnion("type", [
  z.looseObject({ type: z.literal("message_start"), message: z.looseObject({ id: z.string().nullish(), usage: usage.nullish() }) }),
  z.looseObject({ type: z.literal("content_block_start"), index: z.number().int(), content_block: contentBlock }),
  z.looseObject({ type: z.literal("content_block_delta"), index: z.number().int(), delta: z.looseObject({ type: z.string() }) }),
  z.looseObject({ type: z.literal("content_block_stop"), index: z.number().int() }),
  z.looseObject({ type: z.literal("message_delta"), delta: z.looseObject({ stop_reason: z.string().nullish() }), usage: usage.nullish() }),
  z.looseObject({ type: z.literal("message_stop") }),
  z.looseObject({ type: z.literal("ping") }),
  z.looseObject({ type: z.literal("error"), error: z.looseObject({ type: z.string(), message: z.string() }) }),
]);

/**
 * Anthropic counts cache reads and writes apart from `input_tokens`; the gateway's prompt count holds all
 * three, as OpenAI's does, so that each is priced once at its own rate.
 */
const toUsage = (u: Usage): UpstreamUsage => {
  const cached = u.cache_read_input_tokens ?? 0;
  const written = u.cache_creation_input_tokens ?? 0;
  return {
    promptTokens: (u.input_tokens ?? 0) + cached + written,
    completionTokens: u.output_tokens ?? 0,
    cachedTokens: cached,
    cacheWriteTokens: written,
    reasoningTokens: 0,
  };
};


/** The call for `body`: provider, URL, headers and JSON body. */
function call(body: Record<string, unknown>, target: UpstreamTarget, stream: boolean): JsonPost {
  return [
    target.provider,
    `${target.baseUrl.replace(/\/$/, "")}/messages`,
    { "anthropic-version": apiVersion, ...(target.apiKey ? { "x-api-key": target.apiKey } : {}) },
    { ...messagesRequest(body, target.upstreamModel, target.maxCompletionTokens), stream },
  ];
}

/** A whole Messages response as one choice; the stop reason stays native for the gateway to map. */
function toChoice(m: z.infer<typeof message>): CompletionChoice {
  let content = "";
  let reasoning = "";
  const details: Detail[] = [];
  const toolCalls: ToolCall[] = [];
  for (const b of m.content) {
    if (b.type === "text") content += b.text ?? "";
    else if (b.type === "tool_use") toolCalls.push({ id: b.id ?? `call_${toolCalls.length}`, type: "function", function: { name: b.name ?? "", arguments: JSON.stringify(b.input ?? {}) } });
    else if (b.type === "thinking") {
      reasoning += b.thinking ?? "";
      details.push({ type: "reasoning.text", text: b.thinking ?? "", signature: b.signature ?? null, format: reasoningFormat, index: details.length });
    } else if (b.type === "redacted_thinking") details.push({ type: "reasoning.encrypted", data: b.data ?? "", format: reasoningFormat, index: details.length });
  }
  return {
    index: 0,
    text: content || null,
    reasoning: details.length ? reasoning || null : null,
    reasoningDetails: details,
    toolCalls,
    finishReason: m.stop_reason ?? null,
    fields: {},
    choiceFields: {},
  };
}

/** Turns Anthropic's stream events into parts, keeping the usage it reports at the start and the end. */
async function* batches(events: AsyncIterable<string>): AsyncGenerator<PartBatch> {
  let counted: Usage = {};
  const toolIndex = new Map<number, number>();
  for await (const data of events) {
    let parsed;
    try {
      parsed = event.safeParse(JSON.parse(data));
    } catch {
      parsed = undefined;
    }
    if (!parsed?.success) {
      // Event types added after this adapter are skipped; a body that is not JSON is an error.
      if (parsed && !parsed.success) continue;
      throw new UpstreamError("anthropic sent an event that does not parse", 502, false);
    }
    const e = parsed.data;
    if (e.type === "message_start") {
      counted = { ...counted, ...(e.message.usage ?? {}) };
      yield [{ type: "passthrough", choice: 0, fields: { role: "assistant" } }, { type: "text", choice: 0, text: "" }];
    } else if (e.type === "content_block_start" && e.content_block.type === "tool_use") {
      toolIndex.set(e.index, toolIndex.size);
      yield [{ type: "tool-call-start", choice: 0, index: toolIndex.get(e.index)!, id: e.content_block.id ?? `call_${e.index}`, name: e.content_block.name ?? "" }];
    } else if (e.type === "content_block_start" && e.content_block.type === "text" && e.content_block.text) {
      yield [{ type: "text", choice: 0, text: e.content_block.text }];
    } else if (e.type === "content_block_start" && e.content_block.type === "redacted_thinking") {
      yield [{ type: "reasoning-detail", choice: 0, detail: { type: "reasoning.encrypted", data: e.content_block.data ?? "", format: reasoningFormat, index: e.index } }];
    } else if (e.type === "content_block_delta") {
      const d = e.delta as { type: string; text?: string; partial_json?: string; thinking?: string; signature?: string };
      if (d.type === "text_delta") yield [{ type: "text", choice: 0, text: d.text ?? "" }];
      else if (d.type === "input_json_delta") yield [{ type: "tool-call-delta", choice: 0, index: toolIndex.get(e.index) ?? 0, arguments: d.partial_json ?? "" }];
      else if (d.type === "thinking_delta") {
        yield [
          { type: "reasoning", choice: 0, text: d.thinking ?? "" },
          { type: "reasoning-detail", choice: 0, detail: { type: "reasoning.text", text: d.thinking ?? "", format: reasoningFormat, index: e.index } },
        ];
      } else if (d.type === "signature_delta") {
        yield [{ type: "reasoning-detail", choice: 0, detail: { type: "reasoning.text", signature: d.signature ?? "", format: reasoningFormat, index: e.index } }];
      }
    } else if (e.type === "content_block_stop") {
      const index = toolIndex.get(e.index);
      if (index !== undefined) yield [{ type: "tool-call-end", choice: 0, index }];
    } else if (e.type === "message_delta") {
      counted = { ...counted, ...Object.fromEntries(Object.entries(e.usage ?? {}).filter(([, v]) => v !== null && v !== undefined)) };
      if (e.delta.stop_reason) yield [{ type: "finish", choice: 0, reason: e.delta.stop_reason }];
    } else if (e.type === "message_stop") {
      yield [{ type: "usage", usage: toUsage(counted) }];
      return;
    } else if (e.type === "error") {
      throw new UpstreamError(`anthropic: ${e.error.type}: ${e.error.message}`, e.error.type === "overloaded_error" ? 529 : 502, false);
    }
  }
  throw new UpstreamError("anthropic's stream ended before message_stop", 502, false);
}

/** Anthropic's Messages API. */
export const anthropic: ChatProvider = {
  async complete(body, target, signal) {
    const parsed = message.safeParse(await postJsonAnswer(...call(body, target, false), signal));
    if (!parsed.success) throw new UpstreamError(`${target.provider} sent a response that is not a message`, 502, true);
    return {
      id: parsed.data.id ?? null,
      choices: [toChoice(parsed.data)],
      usage: parsed.data.usage ? toUsage(parsed.data.usage) : undefined,
      systemFingerprint: null,
      serviceTier: null,
    };
  },
  async stream(body, target, signal) {
    const res = await postJson(...call(body, target, true), signal);
    return batches(sseData(res.body));
  },
};
