import type { ServerToolCallDetail } from "@switchyard/contracts";
import type { Accounted } from "../../accounting.js";
import type { PartBatch, StreamPart } from "../../generation/parts.js";
import { anthropicErrorType } from "@switchyard/runtime";
import { stopReason, thinkingBlock, usageOf, type MessageFrame } from "./answer.js";
import { wrapReasoning } from "./request.js";
import { serverCallBlocks } from "./server-calls.js";

type Json = Record<string, unknown>;
type Open = "text" | "thinking" | "tool" | undefined;

/**
 * One streamed message as Anthropic's events, from the parts of its turns: `message_start`, then each content
 * block opened, filled with deltas and stopped (blocks are numbered in order from 0, as the Anthropic SDK
 * reads them), then `message_delta` with the stop reason and the usage, and `message_stop`.
 */
export class MessagesEvents {
  /** The block open now and its number; -1 before the first. */
  private index = -1;
  private open: Open;
  /** The block number of each tool call of the turn, by the call's index among the parts. */
  private readonly toolBlocks = new Map<number, number>();
  private stopSequence: string | null = null;
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
    const usage = counted?.type === "metadata" && counted.promptUsage ? usageOf(counted.promptUsage) : { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
    this.send({ type: "message_start", message: { id, type: "message", role: "assistant", model, content: [], stop_reason: null, stop_sequence: null, usage } });
    this.send({ type: "ping" });
  }

  push(batch: PartBatch): void {
    this.begin(batch);
    const reasoned = batch.some((p) => p.type === "reasoning");
    for (const part of batch) this.part(part, reasoned);
  }

  private part(part: StreamPart, reasoned: boolean): void {
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

  /** Thinking text: the open thinking block's, unless it is signed (a block ends with its signature). */
  private thinking(text: string): void {
    if (!text) return;
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

  /** The in-band failure: Anthropic's `error` event, after which the stream ends. */
  fail(status: number, message: string): void {
    this.begin();
    this.close();
    this.send({ type: "error", error: { type: anthropicErrorType(status), message } });
  }

  finish(accounted: Accounted, finishReason: string | null, extra: Json = {}): void {
    this.begin();
    this.close();
    const delta = { stop_reason: stopReason(finishReason), stop_sequence: this.stopSequence };
    this.send({ type: "message_delta", delta, usage: usageOf(accounted.usage), ...extra });
    this.send({ type: "message_stop" });
  }
}
