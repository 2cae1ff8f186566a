import type { ServerToolCallDetail } from "@switchyard/contracts";
import type { Candidate } from "@switchyard/upstream";
import type { AgentSink } from "../generation/agent.js";
import type { Generation } from "../generation/generation.js";
import type { PartBatch } from "../generation/parts.js";
import { SseStream } from "../sse.js";

/** What a dialect's renderer of named events does with one streamed answer. */
export interface DialectEvents {
  /** The answer's first events, when they do not wait for its first parts. */
  start?(): void;
  push(batch: PartBatch): void;
  /** The server tool calls the gateway ran, after the turn that made them. */
  serverCalls(calls: readonly ServerToolCallDetail[]): void;
  /** The in-band failure, after which the stream ends. */
  fail(status: number, message: string, metadata?: Record<string, unknown>): void;
}

/**
 * A streamed answer in a dialect's named events (Responses, Messages). The events start once an endpoint
 * has accepted, the first naming the model that serves; a failure before that is a plain HTTP error, unless
 * keep-alive comments already began the stream.
 */
export abstract class EventStream<E extends DialectEvents> extends SseStream implements AgentSink {
  private renderer: E | undefined;

  /** The renderer of this answer, for the model that serves (or was asked for, when none did). */
  protected abstract begin(model: string): E;

  protected events(model: string): E {
    if (!this.renderer) {
      this.renderer = this.begin(model);
      this.renderer.start?.();
    }
    return this.renderer;
  }

  accepted(_generation: Generation, candidate: Candidate): void {
    this.events(candidate.model);
  }

  parts(batch: PartBatch, candidate: Candidate): void {
    this.events(candidate.model).push(batch);
  }

  serverCalls(entries: ServerToolCallDetail[], candidate: Candidate): void {
    this.events(candidate.model).serverCalls(entries);
  }

  fail(code: number, message: string, model: string, metadata?: Record<string, unknown>): void {
    this.events(model).fail(code, message, metadata);
  }
}
