import type { ServerToolCallDetail } from "@switchyard/contracts";
import type { Accounted } from "../../accounting.js";
import type { Passthrough, PartBatch, StreamPart } from "../../generation/parts.js";
import { nativeEventField } from "../../providers/anthropic.js";
import { anthropicErrorMessage, anthropicErrorType } from "@switchyard/runtime";
import { messageUsage, refusalOf, stopReason, thinkingBlock, usageOf, type MessageFrame } from "./answer.js";
import { wrapReasoning } from "./request.js";
import { serverCallBlocks } from "./server-calls.js";

type Json = Record<string, unknown>;
/** The kind of the block open now; `native` is a block of an Anthropic endpoint's, relayed as it came. */
type Open = "text" | "thinking" | "tool" | "native" | undefined;

/**
 * One streamed message as Anthropic's events, from the parts of its turns: `message_start`, then each content
 * block opened, filled with deltas and stopped (blocks are numbered in order from 0, as the Anthropic SDK
 * reads them), then `message_delta` with the stop reason and the usage, and `message_stop`. An Anthropic
 * endpoint's own content events (`nativeEventField`) are relayed as they came, renumbered only, and the parts
 * read from them are then not rendered again; a refusal (`refusal` of an OpenAI-compatible endpoint) is text,
 * and the message's stop reason is `refusal`.
 */
export class MessagesEvents {
  /** The block open now and its number; -1 before the first. */
  private index = -1;
  private open: Open;
  /** The block number of each tool call of the turn, by the call's index among the parts. */
  private readonly toolBlocks = new Map<number, number>();
  private stopSequence: string | null = null;
  /** The provider's content events are relayed as they came; the block number of each, by the provider's. */
  private native = false;
  private readonly nativeBlocks = new Map<number, number>();
  /** The provider refused: its words were sent as text. */
  private refused = false;
  /** `message_start` was sent. */
  private begun = false;
  /**
   * The open thinking block's signature, gathered from its pieces and sent whole when the block closes (the
   * SDK keeps the last `signature_delta`); once it has one, more thinking is a block of its own.
   */
  private signature: string | undefined;

  constructor(
    private readonly send: (event: Json) => void,
    private readonly frame: MessageFrame,
  ) {}

  /**
   * The message begins with the first parts, so that `message_start` carries the prompt's tokens where the
   * provider counts them as its answer starts (Anthropic does); elsewhere they are 0 there, and every count
   * comes in `message_delta`, where the SDK reads the whole usage.
   */
  private begin(batch: PartBatch = []): void {
    if (this.begun) return;
    this.begun = true;
    const { id, model } = this.frame;
    const counted = batch.find((p) => p.type === "metadata" && p.promptUsage !== undefined);
    const usage = messageUsage((counted?.type === "metadata" && counted.promptUsage) || { promptTokens: 0, completionTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 });
    this.send({ type: "message_start", message: { id, type: "message", role: "assistant", model, content: [], stop_reason: null, stop_sequence: null, usage } });
    this.send({ type: "ping" });
  }

  push(batch: PartBatch): void {
    this.begin(batch);
    const reasoned = batch.some((p) => p.type === "reasoning");
    for (const part of batch) this.part(part, reasoned);
  }

  private part(part: StreamPart, reasoned: boolean): void {
    if (part.type === "passthrough") return this.passthrough(part.fields);
    // The blocks come whole from the provider's own events; its parts serve the gateway's accounts.
    if (this.native && part.type !== "finish") return;
    switch (part.type) {
      case "text":
        if (part.text) this.delta("text", { type: "text", text: "" }, { type: "text_delta", text: part.text });
        return;
      case "reasoning":
        this.thinking(part.text);
        return;
      case "reasoning-detail": {
        const { detail } = part;
        if (detail.type === "reasoning.text") {
          // The text came as a reasoning part too, unless the provider sent only its entries.
          if (!reasoned && typeof detail.text === "string") this.thinking(detail.text);
          if (typeof detail.signature === "string" && detail.signature) this.signaturePiece(detail.signature, detail);
        } else {
          const block = thinkingBlock(detail);
          if (block) this.whole(block);
        }
        return;
      }
      case "tool-call-start":
        this.openBlock("tool", { type: "tool_use", id: part.id, name: part.name, input: {} });
        this.toolBlocks.set(part.index, this.index);
        return;
      case "tool-call-delta": {
        const index = this.toolBlocks.get(part.index);
        if (index !== undefined && part.arguments) this.send({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: part.arguments } });
        return;
      }
      case "tool-call-end":
        if (this.open === "tool" && this.toolBlocks.get(part.index) === this.index) this.close();
        return;
      case "finish":
        this.stopSequence = part.stopSequence ?? null;
        return;
      default:
        return;
    }
  }

  /** A provider's fields the parts do not carry: its own content events, a refusal. */
  private passthrough(fields: Passthrough): void {
    const event = fields[nativeEventField];
    if (typeof event === "object" && event !== null && !Array.isArray(event)) return this.relay(event);
    const refusal = refusalOf(fields);
    if (!refusal) return;
    this.refused = true;
    this.delta("text", { type: "text", text: "" }, { type: "text_delta", text: refusal });
  }

  /** An Anthropic endpoint's content event, numbered among the message's blocks. */
  private relay(event: Json): void {
    this.native = true;
    const at = typeof event.index === "number" ? event.index : -1;
    if (event.type === "content_block_start") {
      this.openBlock("native", event.content_block as Json);
      this.nativeBlocks.set(at, this.index);
      return;
    }
    const index = this.nativeBlocks.get(at);
    if (index === undefined) return;
    if (event.type === "content_block_delta") this.send({ type: "content_block_delta", index, delta: event.delta });
    else if (event.type === "content_block_stop" && this.open === "native" && index === this.index) this.close();
  }

  /** Thinking text: the open thinking block's, unless it is signed (a block ends with its signature). Left out when the display omits it. */
  private thinking(text: string): void {
    if (!text || this.frame.omitThinking) return;
    if (this.open === "thinking" && this.signature !== undefined) this.close();
    this.delta("thinking", { type: "thinking", thinking: "", signature: "" }, { type: "thinking_delta", thinking: text });
  }

  /** A piece of the thinking block's signature; another provider's carries its format in front of its first piece. */
  private signaturePiece(piece: string, entry: Record<string, unknown>): void {
    if (this.open !== "thinking") this.openBlock("thinking", { type: "thinking", thinking: "", signature: "" });
    this.signature = this.signature === undefined ? wrapReasoning(entry, piece) : this.signature + piece;
  }

  /** Appends to the open block of `kind`, opening one first when another (or none) is open. */
  private delta(kind: Exclude<Open, undefined>, block: Json, delta: Json): void {
    if (this.open !== kind) this.openBlock(kind, block);
    this.send({ type: "content_block_delta", index: this.index, delta });
  }

  private openBlock(kind: Exclude<Open, undefined>, block: Json): void {
    this.close();
    this.index += 1;
    this.open = kind;
    this.send({ type: "content_block_start", index: this.index, content_block: block });
  }

  /** A block that comes whole (redacted thinking, a server tool's call and result): started and stopped at once. */
  private whole(block: Json): void {
    this.close();
    this.index += 1;
    this.send({ type: "content_block_start", index: this.index, content_block: block });
    this.send({ type: "content_block_stop", index: this.index });
  }

  private close(): void {
    if (this.open === undefined) return;
    if (this.signature !== undefined) this.send({ type: "content_block_delta", index: this.index, delta: { type: "signature_delta", signature: this.signature } });
    this.signature = undefined;
    this.send({ type: "content_block_stop", index: this.index });
    this.open = undefined;
  }

  /** The server tool calls the gateway ran, after the turn that made them. */
  serverCalls(calls: readonly ServerToolCallDetail[]): void {
    this.begin();
    for (const call of calls) for (const block of serverCallBlocks(call)) this.whole(block);
  }

  /** The in-band failure: Anthropic's `error` event, in a rejecting provider's own words, after which the stream ends. */
  fail(status: number, message: string, metadata?: Record<string, unknown>): void {
    this.begin();
    this.close();
    this.send({ type: "error", error: { type: anthropicErrorType(status), message: anthropicErrorMessage(status, message, metadata) } });
  }

  finish(accounted: Accounted, finishReason: string | null, extra: Json = {}): void {
    this.begin();
    this.close();
    const delta = { stop_reason: this.refused ? "refusal" : stopReason(finishReason), stop_sequence: this.stopSequence };
    this.send({ type: "message_delta", delta, usage: usageOf(accounted.usage), ...extra });
    this.send({ type: "message_stop" });
  }
}
