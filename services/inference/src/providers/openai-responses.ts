import { z } from "zod";
import { posted, postJson, postJsonAnswer, sseData, type JsonPost } from "@switchyard/upstream";
import type { CompletionChoice, PartBatch, Passthrough, StreamPart } from "../generation/parts.js";
import type { Detail } from "../tools/reasoning.js";
import type { ToolCall } from "../tools/run.js";
import { responsesBody, responsesReasoningFormat as format } from "./openai-responses-request.js";
import { tokenCount } from "./answers.js";
import { UpstreamError, type ChatProvider, type UpstreamTarget, type UpstreamUsage } from "./types.js";

const count = tokenCount.nullish();
const usage = z.looseObject({
  input_tokens: count,
  output_tokens: count,
  input_tokens_details: z.looseObject({ cached_tokens: count, cache_write_tokens: count }).nullish(),
  output_tokens_details: z.looseObject({ reasoning_tokens: count }).nullish(),
});
type Usage = z.infer<typeof usage>;

const item = z.looseObject({
  type: z.string(),
  id: z.string().nullish(),
  content: z.array(z.looseObject({ type: z.string(), text: z.string().nullish(), refusal: z.string().nullish() })).nullish(),
  call_id: z.string().nullish(),
  name: z.string().nullish(),
  arguments: z.string().nullish(),
  summary: z.array(z.looseObject({ text: z.string().nullish() })).nullish(),
  encrypted_content: z.string().nullish(),
});
type Item = z.infer<typeof item>;

const failure = z.looseObject({ code: z.string().nullish(), type: z.string().nullish(), message: z.string().nullish() });
type Failure = z.infer<typeof failure>;

const response = z.looseObject({
  id: z.string().nullish(),
  status: z.string().nullish(),
  incomplete_details: z.looseObject({ reason: z.string().nullish() }).nullish(),
  error: failure.nullish(),
  output: z.array(item).nullish(),
  usage: usage.nullish(),
  service_tier: z.string().nullish(),
});
type Response = z.infer<typeof response>;

/** A lifecycle event carrying the response. */
const withResponse = <T extends string>(type: T) => z.looseObject({ type: z.literal(type), response });

/** The stream events the adapter reads; others (content parts, `.done` events, web search...) are skipped. */
const event = z.discriminatedUnion("type", [
  withResponse("response.created"),
  withResponse("response.completed"),
  withResponse("response.incomplete"),
  withResponse("response.failed"),
  z.looseObject({ type: z.literal("response.output_text.delta"), delta: z.string() }),
  z.looseObject({ type: z.literal("response.refusal.delta"), delta: z.string() }),
  z.looseObject({ type: z.literal("response.reasoning_summary_text.delta"), item_id: z.string(), summary_index: z.number().int(), delta: z.string() }),
  z.looseObject({ type: z.literal("response.output_item.added"), output_index: z.number().int(), item }),
  z.looseObject({ type: z.literal("response.output_item.done"), output_index: z.number().int(), item }),
  z.looseObject({ type: z.literal("response.function_call_arguments.delta"), item_id: z.string().nullish(), output_index: z.number().int(), delta: z.string() }),
  z.looseObject({ type: z.literal("error"), code: z.string().nullish(), message: z.string().nullish(), error: failure.nullish() }),
]);
type Event = z.infer<typeof event>;
/** The event types the adapter reads. */
const readTypes = new Set<string>(event.options.map((o) => o.shape.type.value));

/** OpenAI's input count holds the cached tokens, as the gateway's does; its output count holds the reasoning. */
const toUsage = (u: Usage): UpstreamUsage => ({
  promptTokens: u.input_tokens ?? 0,
  completionTokens: u.output_tokens ?? 0,
  cachedTokens: u.input_tokens_details?.cached_tokens ?? 0,
  cacheWriteTokens: u.input_tokens_details?.cache_write_tokens ?? 0,
  reasoningTokens: u.output_tokens_details?.reasoning_tokens ?? 0,
});

/** Codes OpenAI gives a response that failed because its servers are busy. */
const overloadCodes = new Set(["server_is_overloaded", "slow_down"]);

/** A failed response or an error event as an `UpstreamError`: 529 for an overload, 429 for a rate limit, else 502. */
function failed(provider: string, error: Failure | null | undefined, retryable: boolean): UpstreamError {
  const code = error?.code ?? error?.type ?? "error";
  const overloaded = overloadCodes.has(code) || error?.type === "service_unavailable_error";
  const status = overloaded ? 529 : code === "rate_limit_exceeded" ? 429 : 502;
  const transient = overloaded || status === 429 || code === "server_error";
  return new UpstreamError(`${provider}: ${code}: ${error?.message ?? "the response failed"}`, status, retryable && transient);
}

/** The Chat Completions finish reason of a finished response. */
function finishReason(r: Response, calledTools: boolean): string {
  if (r.status === "incomplete") return r.incomplete_details?.reason === "content_filter" ? "content_filter" : "length";
  return calledTools ? "tool_calls" : "stop";
}

/** The call for `body`: provider, URL, headers and JSON body. */
function call(body: Record<string, unknown>, target: UpstreamTarget, stream: boolean): JsonPost {
  return [
    target.provider,
    `${target.baseUrl.replace(/\/$/, "")}/responses`,
    target.apiKey ? { authorization: `Bearer ${target.apiKey}` } : {},
    posted(target, responsesBody(body, target.upstreamModel, stream)),
  ];
}

/** A reasoning item's summaries as reasoning entries, numbered from `next`. */
const summaryDetails = (i: Item, next: () => number): Detail[] =>
  (i.summary ?? []).map((s) => ({ type: "reasoning.summary", summary: s.text ?? "", id: i.id ?? null, format, index: next() }));

/** A reasoning item's encrypted content as a reasoning entry, when it carries one. */
const encryptedDetail = (i: Item, index: number): Detail => ({ type: "reasoning.encrypted", data: i.encrypted_content ?? "", id: i.id ?? null, format, index });

/** A function call item as a Chat Completions tool call; its id is the call id results refer to. */
const toolCall = (i: Item): ToolCall => ({ id: i.call_id ?? i.id ?? "", type: "function", function: { name: i.name ?? "", arguments: i.arguments ?? "" } });

/** A whole response's output items as one choice; its text is null when no message item said words. */
function choiceOf(r: Response): CompletionChoice {
  let text: string | null = null;
  let refusal = "";
  const summaries: string[] = [];
  const details: Detail[] = [];
  const toolCalls: ToolCall[] = [];
  let index = 0;
  for (const i of r.output ?? []) {
    if (i.type === "message") {
      for (const c of i.content ?? []) {
        if (c.type === "output_text") text = (text ?? "") + (c.text ?? "");
        else if (c.type === "refusal") refusal += c.refusal ?? "";
      }
    } else if (i.type === "function_call") toolCalls.push(toolCall(i));
    else if (i.type === "reasoning") {
      summaries.push(...(i.summary ?? []).map((s) => s.text ?? ""));
      details.push(...summaryDetails(i, () => index++));
      if (i.encrypted_content) details.push(encryptedDetail(i, index++));
    }
  }
  const fields: Passthrough = refusal ? { refusal } : {};
  return {
    index: 0,
    text,
    reasoning: summaries.length ? summaries.join("\n\n") : null,
    reasoningDetails: details,
    toolCalls,
    finishReason: finishReason(r, toolCalls.length > 0),
    fields,
    choiceFields: {},
  };
}

/** What a stream has seen so far, to number tool calls and reasoning entries as a buffered answer would. */
interface StreamState {
  provider: string;
  /** Tool call index by function call item id (or `#output_index`). */
  calls: Map<string, number>;
  /** Tool calls whose arguments arrived in pieces. */
  argued: Set<number>;
  /** Reasoning entry index by `item id:summary index`. */
  summaries: Map<string, number>;
  nextDetail: number;
  /** Some reasoning text went out: the next summary starts a new paragraph. */
  reasoned: boolean;
}

/** The key of a function call item in `StreamState.calls`. */
const callKey = (id: string | null | undefined, outputIndex: number) => id ?? `#${outputIndex}`;

/** One piece of a reasoning summary: its text, and the piece of its reasoning entry, which joins the others of its index. */
function summaryPiece(s: StreamState, itemId: string | null, summaryIndex: number, delta: string): StreamPart[] {
  const key = `${itemId ?? ""}:${summaryIndex}`;
  let index = s.summaries.get(key);
  let shown = delta;
  if (index === undefined) {
    index = s.nextDetail++;
    s.summaries.set(key, index);
    if (s.reasoned) shown = `\n\n${delta}`;
  }
  s.reasoned = true;
  const detail: Detail = { type: "reasoning.summary", summary: delta, id: itemId, format, index };
  return [
    { type: "reasoning", choice: 0, text: shown },
    { type: "reasoning-detail", choice: 0, detail },
  ];
}

/** A new output item: a function call starts a tool call, numbered from 0 among the response's calls. */
function itemAdded(s: StreamState, i: Item, outputIndex: number): StreamPart[] {
  if (i.type !== "function_call") return [];
  const index = s.calls.size;
  s.calls.set(callKey(i.id, outputIndex), index);
  const parts: StreamPart[] = [{ type: "tool-call-start", choice: 0, index, id: i.call_id ?? i.id ?? "", name: i.name ?? "" }];
  if (i.arguments) {
    s.argued.add(index);
    parts.push({ type: "tool-call-delta", choice: 0, index, arguments: i.arguments });
  }
  return parts;
}

/** A finished output item: a function call's end (with arguments that did not stream), a reasoning item's encrypted content. */
function itemDone(s: StreamState, i: Item, outputIndex: number): StreamPart[] {
  if (i.type === "function_call") {
    const index = s.calls.get(callKey(i.id, outputIndex));
    if (index === undefined) return [];
    const parts: StreamPart[] = [];
    if (!s.argued.has(index) && i.arguments) parts.push({ type: "tool-call-delta", choice: 0, index, arguments: i.arguments });
    parts.push({ type: "tool-call-end", choice: 0, index });
    return parts;
  }
  if (i.type !== "reasoning") return [];
  // Summaries that did not stream come whole, before the encrypted content, as a buffered answer lists them.
  const id = i.id ?? null;
  const parts = (i.summary ?? []).flatMap((summary, n) => (s.summaries.has(`${id ?? ""}:${n}`) ? [] : summaryPiece(s, id, n, summary.text ?? "")));
  if (i.encrypted_content) parts.push({ type: "reasoning-detail", choice: 0, detail: encryptedDetail(i, s.nextDetail++) });
  return parts;
}

/** The end of a response: its service tier, finish reason and usage. */
function ending(s: StreamState, r: Response): StreamPart[] {
  const parts: StreamPart[] = [];
  if (r.service_tier) parts.push({ type: "metadata", id: r.id ?? null, serviceTier: r.service_tier });
  parts.push({ type: "finish", choice: 0, reason: finishReason(r, s.calls.size > 0) });
  if (r.usage) parts.push({ type: "usage", usage: toUsage(r.usage) });
  return parts;
}

/** The parts of one event; a failure is thrown. */
function partsOf(s: StreamState, e: Event): StreamPart[] {
  switch (e.type) {
    case "response.created":
      return [
        { type: "metadata", id: e.response.id ?? null },
        { type: "passthrough", choice: 0, fields: { role: "assistant" } },
        { type: "text", choice: 0, text: "" },
      ];
    case "response.output_text.delta":
      return e.delta ? [{ type: "text", choice: 0, text: e.delta }] : [];
    case "response.refusal.delta":
      return e.delta ? [{ type: "passthrough", choice: 0, fields: { refusal: e.delta } }] : [];
    case "response.reasoning_summary_text.delta":
      return summaryPiece(s, e.item_id, e.summary_index, e.delta);
    case "response.output_item.added":
      return itemAdded(s, e.item, e.output_index);
    case "response.function_call_arguments.delta": {
      const index = s.calls.get(callKey(e.item_id, e.output_index)) ?? s.calls.get(`#${e.output_index}`);
      if (index === undefined || !e.delta) return [];
      s.argued.add(index);
      return [{ type: "tool-call-delta", choice: 0, index, arguments: e.delta }];
    }
    case "response.output_item.done":
      return itemDone(s, e.item, e.output_index);
    case "response.completed":
    case "response.incomplete":
      return ending(s, e.response);
    case "response.failed":
      throw failed(s.provider, e.response.error, false);
    case "error":
      throw failed(s.provider, e.error ?? { code: e.code, message: e.message }, false);
  }
}

/** One event's data as an event the adapter reads, or undefined for a type it skips. */
function parseEvent(data: string, provider: string): Event | undefined {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    throw new UpstreamError(`${provider} sent an event that does not parse`, 502, false);
  }
  const type = (value as { type?: unknown } | null)?.type;
  if (typeof type !== "string" || !readTypes.has(type)) return undefined;
  const parsed = event.safeParse(value);
  if (!parsed.success) throw new UpstreamError(`${provider} sent a ${type} event that does not parse`, 502, false);
  return parsed.data;
}

/**
 * Turns the Responses stream into part batches, one per event that says something, until the response ends.
 * A response that failed once under way says what it used: that usage is reported before the failure, so it
 * is charged as reported rather than estimated. Before the first batch it is not, as the failure then falls
 * back to another endpoint and nothing of this one is charged.
 */
async function* batches(events: AsyncIterable<string>, provider: string): AsyncGenerator<PartBatch> {
  const state: StreamState = { provider, calls: new Map(), argued: new Set(), summaries: new Map(), nextDetail: 0, reasoned: false };
  let under = false;
  for await (const data of events) {
    const e = parseEvent(data, provider);
    if (!e) continue;
    if (e.type === "response.failed" && e.response.usage && under) yield [{ type: "usage", usage: toUsage(e.response.usage) }];
    const parts = partsOf(state, e);
    under ||= parts.length > 0;
    if (parts.length) yield parts;
    if (e.type === "response.completed" || e.type === "response.incomplete") return;
  }
  throw new UpstreamError(`${provider}'s stream ended before the response completed`, 502, false);
}

/** OpenAI's Responses API, for endpoints whose adapter is `openai`. */
export const openAiResponses: ChatProvider = {
  // A Responses request's labels (Codex's session and turn), which only this API takes.
  reads: ["client_metadata"],
  async complete(body, target, signal) {
    const parsed = response.safeParse(await postJsonAnswer(...call(body, target, false), signal));
    if (!parsed.success || !parsed.data.output) throw new UpstreamError(`${target.provider} sent a response that is not a Responses API response`, 502, true);
    const r = parsed.data;
    if (r.status === "failed" || r.status === "cancelled") throw failed(target.provider, r.error, true);
    return {
      id: r.id ?? null,
      choices: [choiceOf(r)],
      usage: r.usage ? toUsage(r.usage) : undefined,
      systemFingerprint: null,
      serviceTier: r.service_tier ?? null,
    };
  },
  async stream(body, target, signal) {
    const res = await postJson(...call(body, target, true), signal);
    return batches(sseData(res.body), target.provider);
  },
};
