import { extended } from "@switchyard/runtime";
import { z } from "zod";
import { messagesLeftOut, messagesRequest } from "./anthropic-messages.js";
import { posted, postJson, postJsonAnswer, sseData, type JsonPost } from "@switchyard/upstream";
import type { CompletionChoice, Json, PartBatch, StreamPart } from "../generation/parts.js";
import type { Detail } from "../tools/reasoning.js";
import type { ToolCall } from "../tools/run.js";
import { answeredError, tokenCount } from "./answers.js";
import { UpstreamError, type ChatProvider, type UpstreamTarget, type UpstreamUsage } from "./types.js";
import { text } from "../json.js";

const apiVersion = "2023-06-01";
const reasoningFormat = "anthropic-claude-v1";

const count = tokenCount.nullish();
const usage = z.looseObject({
  input_tokens: count,
  output_tokens: count,
  cache_read_input_tokens: count,
  cache_creation_input_tokens: count,
  cache_creation: z.looseObject({ ephemeral_1h_input_tokens: count }).nullish(),
});
type Usage = z.infer<typeof usage>;

/**
 * The tier Anthropic says it served (`usage.service_tier`), in the gateway's names: its `standard` is the
 * gateway's `default`; `priority` and `batch` keep theirs. Null when it says none.
 */
function servedTier(raw: unknown): string | null {
  const tier = (raw as { service_tier?: unknown } | null | undefined)?.service_tier;
  if (typeof tier !== "string" || !tier) return null;
  return tier === "standard" ? "default" : tier;
}

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
  type: z.literal("message"),
  id: z.string().nullish(),
  content: z.array(contentBlock).default([]),
  stop_reason: z.string().nullish(),
  stop_sequence: z.string().nullish(),
  usage: usage.nullish(),
});

const failure = z.looseObject({ type: z.string(), message: z.string() });
/** An answer that is an error: what Anthropic sends for a failure, with a 200 where a proxy passes it so. */
const errorAnswer = z.looseObject({ type: z.literal("error"), error: failure });

/** The status of each of Anthropic's error types, as its API answers them; an unknown one is a 502. */
const errorStatuses: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};
const statusOf = (type: string): number => errorStatuses[type] ?? 502;

const event = z.discriminatedUnion("type", [
  // Usage is read apart (`reported`): a figure that does not parse must not cost the event its stop reason.
  z.looseObject({ type: z.literal("message_start"), message: z.looseObject({ id: z.string().nullish(), usage: z.unknown() }) }),
  z.looseObject({ type: z.literal("content_block_start"), index: z.number().int(), content_block: contentBlock }),
  z.looseObject({ type: z.literal("content_block_stop"), index: z.number().int() }),
  z.looseObject({ type: z.literal("message_delta"), delta: z.looseObject({ stop_reason: z.string().nullish(), stop_sequence: z.string().nullish() }), usage: z.unknown() }),
  z.looseObject({ type: z.literal("message_stop") }),
  z.looseObject({ type: z.literal("ping") }),
  errorAnswer,
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
    cacheWrite1hTokens: Math.min(u.cache_creation?.ephemeral_1h_input_tokens ?? 0, written),
    reasoningTokens: 0,
  };
};

/**
 * A call of Anthropic's API at `path`: provider, URL, headers (the client's `anthropic-version` and
 * `anthropic-beta` win) and JSON body, with the endpoint's model and, for `/messages`, whether to stream.
 */
function call(path: string, request: Record<string, unknown>, target: UpstreamTarget, stream?: boolean): JsonPost {
  return [
    target.provider,
    `${target.baseUrl.replace(/\/$/, "")}${path}`,
    { "anthropic-version": apiVersion, ...target.headers, ...(target.apiKey ? { "x-api-key": target.apiKey } : {}) },
    posted(target, extended(request, { model: target.upstreamModel, ...(stream === undefined ? {} : { stream }) })),
  ];
}

/**
 * Where the Messages API's own reader (`anthropicMessages`, which only the Messages dialect's requests reach)
 * carries Anthropic's blocks as they came, beside the normalised answer the gateway reads: a buffered
 * choice's `fields` hold the content blocks, and each streamed content event comes first in its batch as a
 * `passthrough` part's field. The Messages dialect relays them, in order, citations and all.
 */
export const nativeContentField = "anthropic_content";
export const nativeEventField = "anthropic_event";

/**
 * A whole Messages response as one choice; the stop reason stays native for the gateway to map. `native`
 * keeps the content blocks as they came too (`nativeContentField`).
 */
function toChoice(m: z.infer<typeof message>, native: boolean): CompletionChoice {
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
    ...(m.stop_sequence ? { stopSequence: m.stop_sequence } : {}),
    fields: native ? { [nativeContentField]: m.content as Json } : {},
    choiceFields: {},
  };
}

type Delta = { type?: unknown; text?: unknown; partial_json?: unknown; thinking?: unknown; signature?: unknown };
type DeltaEvent = { type: "content_block_delta"; index: number; delta: Delta };

/** A `content_block_delta`, the commonest event by far, checked by hand: a schema's parse of every token costs more than relaying it. */
const isDelta = (value: unknown): value is DeltaEvent => {
  const e = value as Partial<DeltaEvent> | null;
  return typeof e === "object" && e !== null && e.type === "content_block_delta" && typeof e.index === "number" && typeof e.delta === "object" && e.delta !== null;
};

/** One delta's parts; tool input goes to the call its block began (a server tool's input, to none). */
function deltaBatch(e: DeltaEvent, toolIndex: ReadonlyMap<number, number>): PartBatch | undefined {
  const d = e.delta;
  if (d.type === "text_delta") return [{ type: "text", choice: 0, text: text(d.text) }];
  if (d.type === "input_json_delta") {
    const index = toolIndex.get(e.index);
    return index === undefined ? undefined : [{ type: "tool-call-delta", choice: 0, index, arguments: text(d.partial_json) }];
  }
  if (d.type === "thinking_delta") {
    return [
      { type: "reasoning", choice: 0, text: text(d.thinking) },
      { type: "reasoning-detail", choice: 0, detail: { type: "reasoning.text", text: text(d.thinking), format: reasoningFormat, index: e.index } },
    ];
  }
  if (d.type === "signature_delta") return [{ type: "reasoning-detail", choice: 0, detail: { type: "reasoning.text", signature: text(d.signature), format: reasoningFormat, index: e.index } }];
  return undefined;
}

/** Anthropic's last event: the stream's reader stops there and drains what follows. */
const endsStream = (data: string): boolean => data.includes('"message_stop"');

type BlockEvent = Extract<z.infer<typeof event>, { type: "content_block_start" | "content_block_stop" }>;

/** The parts a block's start or stop gives: a tool call begun or ended, text it starts with, redacted thinking. */
function blockParts(e: BlockEvent, toolIndex: Map<number, number>): StreamPart[] {
  if (e.type === "content_block_stop") {
    const index = toolIndex.get(e.index);
    return index === undefined ? [] : [{ type: "tool-call-end", choice: 0, index }];
  }
  const block = e.content_block;
  if (block.type === "tool_use") {
    toolIndex.set(e.index, toolIndex.size);
    return [{ type: "tool-call-start", choice: 0, index: toolIndex.get(e.index)!, id: block.id ?? `call_${e.index}`, name: block.name ?? "" }];
  }
  if (block.type === "text" && block.text) return [{ type: "text", choice: 0, text: block.text }];
  if (block.type === "redacted_thinking") return [{ type: "reasoning-detail", choice: 0, detail: { type: "reasoning.encrypted", data: block.data ?? "", format: reasoningFormat, index: e.index } }];
  return [];
}

/** A content event as it came, for the Messages dialect to relay (`nativeEventField`). */
const asIs = (raw: unknown): StreamPart => ({ type: "passthrough", choice: 0, fields: { [nativeEventField]: raw as Json } });
const isContentEvent = (raw: unknown): boolean => {
  const type = (raw as { type?: unknown } | null)?.type;
  return type === "content_block_start" || type === "content_block_stop";
};

/** The figures of an event's usage, its missing ones left out; undefined when a figure does not parse. */
function reported(raw: unknown): Usage | undefined {
  if (raw === undefined || raw === null) return {};
  const parsed = usage.safeParse(raw);
  if (!parsed.success) return undefined;
  return Object.fromEntries(Object.entries(parsed.data).filter(([, v]) => v !== null && v !== undefined)) as Usage;
}

/**
 * Turns Anthropic's stream events into parts, keeping the usage it reports at its start and in `message_delta`;
 * `native` puts each content event as it came in front of its parts. Usage with a figure that does not parse (a
 * string, a negative count) makes the whole usage unreported: the stream goes on with its stop reason, the
 * prompt's count of `message_start` is kept when it parsed, and the answer's tokens are estimated.
 */
async function* batches(events: AsyncIterable<string>, native: boolean): AsyncGenerator<PartBatch> {
  let counted: Usage | undefined = {};
  let usageSent = false;
  let stopped = false;
  const toolIndex = new Map<number, number>();
  for await (const data of events) {
    let raw: unknown;
    try {
      raw = JSON.parse(data);
    } catch {
      throw new UpstreamError("anthropic sent an event that does not parse", 502, false);
    }
    if (isDelta(raw)) {
      const batch = deltaBatch(raw, toolIndex);
      if (native) yield [asIs(raw), ...(batch ?? [])];
      else if (batch) yield batch;
      continue;
    }
    const lead = native && isContentEvent(raw) ? [asIs(raw)] : [];
    const parsed = event.safeParse(raw);
    // Event types added after this adapter are skipped; a content event of the Messages API's own reader still goes as it came.
    if (!parsed.success) {
      if (lead.length) yield lead;
      continue;
    }
    const e = parsed.data;
    if (e.type === "content_block_start" || e.type === "content_block_stop") {
      const parts = [...lead, ...blockParts(e, toolIndex)];
      if (parts.length) yield parts;
    } else if (e.type === "message_start") {
      const start = reported(e.message.usage);
      counted = counted && start && { ...counted, ...start };
      const tier = servedTier(e.message.usage);
      const id = e.message.id;
      const metadata: StreamPart[] =
        counted || tier || id
          ? [{ type: "metadata", ...(id ? { id } : {}), ...(counted ? { promptUsage: { ...toUsage(counted), completionTokens: 0 } } : {}), ...(tier ? { serviceTier: tier } : {}) }]
          : [];
      yield [...metadata, { type: "passthrough", choice: 0, fields: { role: "assistant" } }, { type: "text", choice: 0, text: "" }];
    } else if (e.type === "message_delta") {
      const delta = reported(e.usage);
      counted = counted && delta && { ...counted, ...delta };
      const { stop_reason: reason, stop_sequence: stopSequence } = e.delta;
      // The tier comes at the start; a tier said only here still reaches the charge.
      const tier = servedTier(e.usage);
      const parts: StreamPart[] = tier ? [{ type: "metadata", serviceTier: tier }] : [];
      if (reason) parts.push({ type: "finish", choice: 0, reason, ...(stopSequence ? { stopSequence } : {}) });
      // The counts here are the message's final ones: a stream cut before message_stop keeps them.
      if (counted) parts.push({ type: "usage", usage: toUsage(counted) });
      usageSent = counted !== undefined;
      if (parts.length) yield parts;
    } else if (e.type === "message_stop") {
      stopped = true;
      if (counted && !usageSent) yield [{ type: "usage", usage: toUsage(counted) }];
    } else if (e.type === "error") {
      // Mid-stream, whatever its status (before the first event, the attempt makes it a fallback as the status allows).
      throw new UpstreamError(`anthropic: ${e.error.type}: ${e.error.message}`, statusOf(e.error.type), false);
    }
  }
  if (!stopped) throw new UpstreamError("anthropic's stream ended before message_stop", 502, false);
}

/**
 * An adapter over Anthropic's Messages API, given how it makes a Messages body of the body it gets; `native`
 * carries Anthropic's blocks as they came beside the normalised answer (`nativeContentField`, `nativeEventField`).
 */
function messagesApi(toMessages: (body: Record<string, unknown>, target: UpstreamTarget) => Record<string, unknown>, native: boolean): ChatProvider {
  return {
    async complete(body, target, signal) {
      const answer = await postJsonAnswer(...call("/messages", toMessages(body, target), target, false), signal);
      const refused = (answer as { type?: unknown } | null)?.type === "error" ? errorAnswer.safeParse(answer) : undefined;
      if (refused?.success) throw answeredError(target.provider, statusOf(refused.data.error.type), `${refused.data.error.type}: ${refused.data.error.message}`);
      const parsed = message.safeParse(answer);
      if (!parsed.success) throw new UpstreamError(`${target.provider} sent a response that is not a message`, 502, true);
      return {
        id: parsed.data.id ?? null,
        choices: [toChoice(parsed.data, native)],
        usage: parsed.data.usage ? toUsage(parsed.data.usage) : undefined,
        systemFingerprint: null,
        serviceTier: servedTier(parsed.data.usage),
      };
    },
    async stream(body, target, signal) {
      const res = await postJson(...call("/messages", toMessages(body, target), target, true), signal);
      return batches(sseData(res.body, endsStream), native);
    },
  };
}

/** Anthropic's Messages API, for requests in Chat Completions' shape: translated. */
export const anthropic: ChatProvider = {
  ...messagesApi((body, target) => messagesRequest(body, target.upstreamModel, target.maxCompletionTokens), false),
  leftOut: messagesLeftOut,
};

/** Anthropic's Messages API, for requests already in its shape (the Messages dialect's own body): sent as they are. */
export const anthropicMessages = messagesApi((body) => body, true);

const countAnswer = z.object({ input_tokens: tokenCount });

/** Anthropic's `POST /messages/count_tokens`, for a body in its shape. */
export async function countTokens(body: Record<string, unknown>, target: UpstreamTarget, signal: AbortSignal): Promise<number> {
  const parsed = countAnswer.safeParse(await postJsonAnswer(...call("/messages/count_tokens", body, target), signal));
  if (!parsed.success) throw new UpstreamError(`${target.provider} sent a token count that does not parse`, 502, true);
  return parsed.data.input_tokens;
}
