import { type ResponseObject, type ResponseOutputItem, type ServerToolCallDetail } from "@switchyard/contracts";
import { extended } from "@switchyard/runtime";
import type { PartBatch, StreamPart } from "../../generation/parts.js";
import type { Accounted } from "../../accounting.js";
import type { Detail } from "../../tools/reasoning.js";
import {
  citationsOf,
  closingStatus,
  functionCallItem,
  ItemIds,
  messageItem,
  outcomeOf,
  outputText,
  reasoningItem,
  refusalOf,
  refusalPart,
  responseObject,
  serverPrefix,
  serverToolItem,
  usageObject,
  type Citation,
  type MessagePart,
  type Outcome,
  type Reasoning,
  type ResponseFrame,
  type ToolUse,
} from "./answer.js";
import { text } from "../../json.js";

/** One server-sent event of a streamed response; `sequence_number` is added when it is sent. */
export type ResponseEvent = { type: string } & Record<string, unknown>;

type ItemStatus = "completed" | "incomplete";
type ChoicePart = Extract<StreamPart, { choice: number }>;

interface MessageSlot {
  index: number;
  id: string;
  /** The message's parts in the order they began: its words, its refusal. */
  parts: Array<{ type: MessagePart["type"]; value: string }>;
  annotations: Citation[];
}

/** A message's parts as its item shows them, the citations on its words. */
const contentOf = (slot: MessageSlot): MessagePart[] => slot.parts.map((p) => (p.type === "output_text" ? outputText(p.value, slot.annotations) : refusalPart(p.value)));

interface ReasoningSlot {
  index: number;
  state: Reasoning;
  /** `text`: reasoning text streamed as a reasoning_text part; `summary`: as summary parts. */
  mode: "text" | "summary";
  /** The summary part being written, by the key of the entries it gathers. */
  part: { key: unknown; index: number } | null;
  /** A signed thinking block is whole: more reasoning starts another item. */
  sealed: boolean;
  /** The provider's id of the reasoning item its summaries came from ("" when they named none): the item's id too. */
  upstream: string;
}

interface CallSlot {
  index: number;
  id: string;
  callId: string;
  name: string;
  args: string;
}


/** The `error.code` of a failed response for an HTTP status, from OpenAI's codes. */
export function errorCode(status: number): string {
  if (status === 429) return "rate_limit_exceeded";
  if (status === 400 || status === 413 || status === 422) return "invalid_prompt";
  return "server_error";
}

/**
 * Writes one streamed answer as the Responses event sequence: `response.created` and
 * `response.in_progress`, then each output item added, its deltas and its done events, and at the end
 * `response.completed` (or `incomplete`, or `failed`) carrying the same `response` object a buffered
 * answer has. Every event has a `sequence_number` counting from 0. Only choice 0 is shown.
 */
export class ResponsesEvents {
  private sequence = 0;
  private readonly output: ResponseOutputItem[] = [];
  private readonly ids: ItemIds;
  private message: MessageSlot | null = null;
  private lastMessage: MessageSlot | null = null;
  private reasoning: ReasoningSlot | null = null;
  private lastReasoning: ReasoningSlot | null = null;
  private readonly calls = new Map<number, CallSlot>();
  private serviceTier: string | null = null;
  private started = false;
  private ended = false;

  constructor(
    private readonly send: (event: ResponseEvent) => void,
    private readonly frame: ResponseFrame,
    private readonly now: () => number = () => Math.floor(Date.now() / 1000),
  ) {
    this.ids = new ItemIds(frame.id);
  }

  /** Opens the stream: the response created, then in progress, with no output yet. The first write opens it too. */
  start(): void {
    if (this.started) return;
    this.started = true;
    const response = this.snapshot({ status: "in_progress", incomplete_details: null, error: null }, [], null, null);
    this.emit({ type: "response.created", response });
    this.emit({ type: "response.in_progress", response });
  }

  /** One provider event's parts, as the events of the items they add to. */
  push(batch: PartBatch): void {
    if (this.ended) return;
    const parts = batch.filter((p): p is ChoicePart => "choice" in p && p.choice === 0);
    const summarized = parts.some((p) => p.type === "reasoning-detail" && p.detail.type === "reasoning.summary");
    const reasoned = parts.some((p) => p.type === "reasoning");
    for (const part of batch) if (part.type === "metadata" && part.serviceTier) this.serviceTier = part.serviceTier;
    for (const part of parts) {
      if (part.type === "text") this.write("output_text", part.text);
      else if (part.type === "reasoning" && !summarized && !this.frame.hideReasoning) this.thought(part.text);
      else if (part.type === "reasoning-detail" && !this.frame.hideReasoning) this.detail(part.detail, reasoned);
      else if (part.type === "tool-call-start") this.callStart(part.index, part.id, part.name);
      else if (part.type === "tool-call-delta") this.callDelta(part.index, part.arguments);
      else if (part.type === "tool-call-end") this.callEnd(part.index, "completed");
      else if (part.type === "passthrough") {
        this.write("refusal", refusalOf(part.fields));
        this.annotate(citationsOf(part.fields));
      }
    }
  }

  /** The server tool calls the gateway ran: an item each, added and done at once. */
  serverCalls(calls: readonly ServerToolCallDetail[]): void {
    for (const call of calls) {
      if (this.ended) return;
      this.closeWords("completed");
      const item = serverToolItem(call, this.ids.next(serverPrefix(call.tool_name)));
      const index = this.output.push(item) - 1;
      this.emit({ type: "response.output_item.added", output_index: index, item: { ...item, status: "in_progress" } });
      this.emit({ type: "response.output_item.done", output_index: index, item });
    }
  }

  /** Closes every open item in order and ends with the whole response, completed or incomplete. */
  finish(accounted: Accounted | null, finishReason: string | null, toolUse?: ToolUse): ResponseObject | undefined {
    if (this.ended) return undefined;
    const outcome = outcomeOf(finishReason ?? "stop");
    this.closeAll(closingStatus(outcome));
    this.ended = true;
    const usage = accounted ? usageObject(accounted, toolUse) : null;
    const response = this.snapshot(outcome, this.output, usage, this.now());
    this.emit({ type: outcome.status === "completed" ? "response.completed" : "response.incomplete", response });
    return response;
  }

  /** Ends the stream with an error: the `error` event, then `response.failed` with what was written so far. */
  fail(status: number, message: string): void {
    if (this.ended) return;
    this.ended = true;
    const code = errorCode(status);
    this.emit({ type: "error", code, message, param: null });
    const output = this.output.map((item, index) => this.openItem(index) ?? item);
    this.emit({ type: "response.failed", response: this.snapshot({ status: "failed", incomplete_details: null, error: { code, message } }, output, null, null) });
  }

  /** Sends an event with the next sequence number. */
  private emit(event: ResponseEvent): void {
    if (!this.started) this.start();
    this.send(extended(event, { sequence_number: this.sequence++ }));
  }

  /** The response object as it stands. */
  private snapshot(outcome: Outcome, output: ResponseOutputItem[], usage: ResponseObject["usage"], completedAt: number | null): ResponseObject {
    return responseObject(this.frame, [...output], outcome, usage, completedAt, this.serviceTier);
  }

  /** An item still open, as `incomplete`: what a failed response shows of it. */
  private openItem(index: number): ResponseOutputItem | undefined {
    if (this.message?.index === index) return messageItem(this.message.id, contentOf(this.message), "incomplete");
    if (this.reasoning?.index === index) return reasoningItem(this.reasoning.state, "incomplete");
    const call = [...this.calls.values()].find((c) => c.index === index);
    return call ? functionCallItem(call.id, call.callId, call.name, call.args, "incomplete", this.frame.names) : undefined;
  }

  /** Adds an item to the output and announces it. */
  private add(item: ResponseOutputItem): number {
    const index = this.output.push(item) - 1;
    this.emit({ type: "response.output_item.added", output_index: index, item });
    return index;
  }

  /** Replaces an item with its final form and announces it done. */
  private done(index: number, item: ResponseOutputItem): void {
    this.output[index] = item;
    this.emit({ type: "response.output_item.done", output_index: index, item });
  }

  /** Answer text or a refusal, in the open message's part of that type (a new message or part when there is none). */
  private write(type: MessagePart["type"], delta: string): void {
    if (!delta) return;
    const slot = this.message ?? this.openMessage();
    let at = slot.parts.findIndex((p) => p.type === type);
    if (at < 0) {
      at = slot.parts.push({ type, value: "" }) - 1;
      this.emit({ type: "response.content_part.added", item_id: slot.id, output_index: slot.index, content_index: at, part: type === "output_text" ? outputText("") : refusalPart("") });
    }
    slot.parts[at]!.value += delta;
    const base = { item_id: slot.id, output_index: slot.index, content_index: at, delta };
    this.emit(type === "output_text" ? { type: "response.output_text.delta", ...base, logprobs: [] } : { type: "response.refusal.delta", ...base });
  }

  /** A new message item; its parts begin as its words or refusal arrive. */
  private openMessage(): MessageSlot {
    this.closeReasoning("completed");
    const id = this.ids.next("msg");
    const index = this.add({ type: "message", id, role: "assistant", status: "in_progress", content: [] });
    this.message = { index, id, parts: [], annotations: [] };
    this.lastMessage = this.message;
    return this.message;
  }

  /** Ends the open message: each part's text and the part, then the item. */
  private closeMessage(status: ItemStatus): void {
    const slot = this.message;
    if (!slot) return;
    this.message = null;
    const content = contentOf(slot);
    slot.parts.forEach((part, at) => {
      const base = { item_id: slot.id, output_index: slot.index, content_index: at };
      if (part.type === "output_text") this.emit({ type: "response.output_text.done", ...base, text: part.value, logprobs: [] });
      else this.emit({ type: "response.refusal.done", ...base, refusal: part.value });
      this.emit({ type: "response.content_part.done", ...base, part: content[at] });
    });
    this.done(slot.index, messageItem(slot.id, content, status));
  }

  /** Citations join the open message, or the last one when it is already done. */
  private annotate(citations: Citation[]): void {
    const slot = this.message ?? this.lastMessage;
    if (!citations.length || !slot) return;
    slot.annotations.push(...citations);
    const item = this.output[slot.index];
    if (slot !== this.message && item?.type === "message") this.output[slot.index] = messageItem(slot.id, contentOf(slot), item.status);
  }

  /** Reasoning text: a summary when the client asked for summaries, else reasoning text. */
  private thought(delta: string): void {
    if (!delta) return;
    if (this.frame.summarize) this.summary("text", delta);
    else this.reasoningText(delta);
  }

  /** The reasoning item `mode` takes (for the provider's item `upstream`), opened when none fits. */
  private reasoningSlot(mode: ReasoningSlot["mode"], upstream = ""): ReasoningSlot {
    const open = this.reasoning;
    if (open && open.mode === mode && !open.sealed && open.upstream === upstream) return open;
    this.closeWords("completed");
    const named = upstream ? { entryId: upstream } : {};
    const state: Reasoning = { id: upstream ? this.ids.keep(upstream, "rs") : this.ids.next("rs"), summary: [], text: mode === "text" ? "" : null, ...named };
    const index = this.add({ type: "reasoning", id: state.id, status: "in_progress", summary: [] });
    if (mode === "text") this.emit({ type: "response.content_part.added", item_id: state.id, output_index: index, content_index: 0, part: { type: "reasoning_text", text: "" } });
    this.reasoning = { index, state, mode, part: null, sealed: false, upstream };
    this.lastReasoning = this.reasoning;
    return this.reasoning;
  }

  /** The model's reasoning text, as a reasoning_text delta. */
  private reasoningText(delta: string): void {
    const slot = this.reasoningSlot("text");
    slot.state.text = (slot.state.text ?? "") + delta;
    this.emit({ type: "response.reasoning_text.delta", item_id: slot.state.id, output_index: slot.index, content_index: 0, delta });
  }

  /** Summary text; entries of another key start another summary part, of another provider item another item. */
  private summary(key: unknown, delta: string, upstream = ""): void {
    const slot = this.reasoningSlot("summary", upstream);
    if (slot.part && slot.part.key !== key) this.closeSummaryPart(slot);
    if (!slot.part) {
      slot.part = { key, index: slot.state.summary.push("") - 1 };
      const part = { type: "summary_text", text: "" };
      this.emit({ type: "response.reasoning_summary_part.added", item_id: slot.state.id, output_index: slot.index, summary_index: slot.part.index, part });
    }
    slot.state.summary[slot.part.index] += delta;
    this.emit({ type: "response.reasoning_summary_text.delta", item_id: slot.state.id, output_index: slot.index, summary_index: slot.part.index, delta });
  }

  /** Ends the summary part being written. */
  private closeSummaryPart(slot: ReasoningSlot): void {
    if (!slot.part) return;
    const at = { item_id: slot.state.id, output_index: slot.index, summary_index: slot.part.index };
    const done = slot.state.summary[slot.part.index] ?? "";
    slot.part = null;
    this.emit({ type: "response.reasoning_summary_text.done", ...at, text: done });
    this.emit({ type: "response.reasoning_summary_part.done", ...at, part: { type: "summary_text", text: done } });
  }

  /** Ends the open reasoning item: its text or summary part, then the item. */
  private closeReasoning(status: ItemStatus): void {
    const slot = this.reasoning;
    if (!slot) return;
    this.reasoning = null;
    if (slot.mode === "summary") this.closeSummaryPart(slot);
    else {
      const at = { item_id: slot.state.id, output_index: slot.index, content_index: 0 };
      const done = slot.state.text ?? "";
      this.emit({ type: "response.reasoning_text.done", ...at, text: done });
      this.emit({ type: "response.content_part.done", ...at, part: { type: "reasoning_text", text: done } });
    }
    this.done(slot.index, reasoningItem(slot.state, status));
  }

  /**
   * One of the provider's reasoning entries: a summary's text, a thinking block's text (when the event
   * carried no reasoning text beside it) and signature, or encrypted reasoning to send back.
   */
  private detail(detail: Detail, reasoned: boolean): void {
    if (detail.type === "reasoning.summary") {
      if (text(detail.summary)) this.summary(detail.index ?? "summary", text(detail.summary), text(detail.id));
    } else if (detail.type === "reasoning.text") {
      if (!reasoned) this.thought(text(detail.text));
      if (text(detail.signature)) this.sign(text(detail.signature), detail.format);
    } else if (detail.type === "reasoning.encrypted" && text(detail.data)) this.encrypted(detail);
    if (detail.type !== "reasoning.encrypted" && typeof detail.format === "string" && this.reasoning) this.reasoning.state.format = detail.format;
  }

  /** A thinking block's signature: it ends the block's item. */
  private sign(signature: string, format: unknown): void {
    const slot = this.reasoning ?? this.lastReasoning;
    if (!slot) return;
    slot.state.signature = (slot.state.signature ?? "") + signature;
    if (typeof format === "string") slot.state.format = format;
    slot.sealed = true;
    const item = this.output[slot.index];
    if (slot !== this.reasoning && item?.type === "reasoning") this.output[slot.index] = reasoningItem(slot.state, item.status);
  }

  /** Encrypted reasoning: in the open item (of its id) when it has none, else an item of its own (named by the provider's id). */
  private encrypted(detail: Detail): void {
    const data = text(detail.data);
    const format = typeof detail.format === "string" ? { format: detail.format } : {};
    const entry = text(detail.id) ? { entryId: text(detail.id) } : {};
    const open = this.reasoning;
    if ((!text(detail.id) || text(detail.id) === open?.upstream) && open && !open.sealed && !open.state.encrypted) {
      Object.assign(open.state, { encrypted: data, ...format, ...entry });
      return;
    }
    this.closeWords("completed");
    const id = text(detail.id) ? this.ids.keep(text(detail.id), "rs") : this.ids.next("rs");
    const item = reasoningItem({ id, summary: [], text: null, encrypted: data, ...format, ...entry }, "completed");
    const index = this.add({ ...item, status: "in_progress" });
    this.done(index, item);
  }

  /** A function call begins: its item, with no arguments yet. */
  private callStart(index: number, callId: string, name: string): void {
    this.closeWords("completed");
    const id = this.ids.next("fc");
    const at = this.add(functionCallItem(id, callId, name, "", "in_progress", this.frame.names));
    this.calls.set(index, { index: at, id, callId, name, args: "" });
  }

  /** A piece of a function call's arguments. */
  private callDelta(index: number, delta: string): void {
    const slot = this.calls.get(index);
    if (!slot || !delta) return;
    slot.args += delta;
    this.emit({ type: "response.function_call_arguments.delta", item_id: slot.id, output_index: slot.index, delta });
  }

  /** A function call is whole. */
  private callEnd(index: number, status: ItemStatus): void {
    const slot = this.calls.get(index);
    if (!slot) return;
    this.calls.delete(index);
    const item = functionCallItem(slot.id, slot.callId, slot.name, slot.args, status, this.frame.names);
    this.emit({ type: "response.function_call_arguments.done", item_id: slot.id, output_index: slot.index, name: item.name, arguments: slot.args });
    this.done(slot.index, item);
  }

  /** Closes the open message and reasoning. */
  private closeWords(status: ItemStatus): void {
    this.closeMessage(status);
    this.closeReasoning(status);
  }

  /** Closes every open item, in the order they were added. */
  private closeAll(status: ItemStatus): void {
    const open = [
      ...(this.message ? [{ index: this.message.index, close: () => this.closeMessage(status) }] : []),
      ...(this.reasoning ? [{ index: this.reasoning.index, close: () => this.closeReasoning(status) }] : []),
      ...[...this.calls.entries()].map(([key, slot]) => ({ index: slot.index, close: () => this.callEnd(key, status) })),
    ];
    for (const item of open.sort((a, b) => a.index - b.index)) item.close();
  }
}
