import { streamErrorChunk, type ChatUsage, type ServerToolCallDetail } from "@switchyard/contracts";
import { extended } from "@switchyard/runtime";
import type { Candidate } from "@switchyard/upstream";
import type { ServerResponse } from "node:http";
import type { AgentSink } from "../../generation/agent.js";
import type { Generation } from "../../generation/generation.js";
import type { PartBatch } from "../../generation/parts.js";
import type { Plan } from "../../generation/plan.js";
import { hidesReasoning, visibleChoices } from "../../providers/hide-reasoning.js";
import { normalizeFinishReason } from "../../accounting.js";
import { SseStream } from "../../sse.js";

type Delta = Record<string, unknown> & { tool_calls?: Array<{ index: number; id?: string; type?: "function"; function: { name?: string; arguments: string }; extra_content?: unknown }> };

interface ChoiceChunk {
  delta: Delta;
  choiceFields: Record<string, unknown>;
  finish: string | null;
}

/** Adds one part to its choice's delta. */
function addPart(choices: Map<number, ChoiceChunk>, part: Exclude<PartBatch[number], { type: "metadata" | "usage" }>) {
  let entry = choices.get(part.choice);
  if (!entry) choices.set(part.choice, (entry = { delta: {}, choiceFields: {}, finish: null }));
  const { delta } = entry;
  if (part.type === "passthrough") {
    entry.delta = { ...part.fields, ...delta };
    Object.assign(entry.choiceFields, part.choiceFields ?? {});
  } else if (part.type === "text") delta.content = ((delta.content as string | undefined) ?? "") + part.text;
  else if (part.type === "reasoning") delta.reasoning = ((delta.reasoning as string | undefined) ?? "") + part.text;
  else if (part.type === "reasoning-detail") ((delta.reasoning_details ??= []) as unknown[]).push(part.detail);
  else if (part.type === "tool-call-start") {
    (delta.tool_calls ??= []).push({ index: part.index, id: part.id, type: "function", function: { name: part.name, arguments: "" }, ...(part.extraContent !== undefined ? { extra_content: part.extraContent } : {}) });
  }
  else if (part.type === "tool-call-delta") {
    const same = delta.tool_calls?.find((c) => c.index === part.index);
    if (same) same.function.arguments += part.arguments;
    else (delta.tool_calls ??= []).push({ index: part.index, function: { arguments: part.arguments } });
  } else if (part.type === "finish") entry.finish = part.reason;
}

/** A delta with nothing to say (a role alone, nulls, empty text): under the server-tool loop it is not sent. */
const says = (delta: Delta) => !Object.keys(delta).every((k) => k === "role" || delta[k] === null || delta[k] === "");

/**
 * Chat Completions' stream: `chat.completion.chunk` frames, one per provider event, `: OPENROUTER
 * PROCESSING` comments while waiting, the final chunk with the whole usage, then `[DONE]`. Under the
 * server-tool loop (`loop`), finish reasons wait for the last turn, which sends its own finish chunk.
 */
export class ChatStream extends SseStream implements AgentSink {
  private fingerprint: string | null = null;
  private serviceTier: string | null = null;

  constructor(
    private readonly plan: Plan,
    private readonly res: ServerResponse,
    private readonly loop: boolean,
  ) {
    super(res, plan.generationId);
  }

  /**
   * A chunk's fields up to `model`, to which the caller adds the rest: fields added to one literal keep one
   * shape for every chunk, where a spread of this followed by new fields would not (see `extended`).
   */
  private frame(model: string): Record<string, unknown> {
    return { id: this.plan.generationId, object: "chat.completion.chunk", created: this.created, model };
  }

  /** A chunk of `choices`: the frame, the provider's fingerprint and service tier once known, the choices. */
  private chunk(model: string, choices: unknown[]): Record<string, unknown> {
    const chunk = this.frame(model);
    if (this.fingerprint) chunk.system_fingerprint = this.fingerprint;
    if (this.serviceTier) chunk.service_tier = this.serviceTier;
    chunk.choices = choices;
    return chunk;
  }

  /** Debugging aid: the exact body the serving endpoint received, sent before its output. */
  accepted(generation: Generation, candidate: Candidate): void {
    this.fingerprint = null;
    this.serviceTier = null;
    if (this.plan.request.debug?.echo_upstream_body) this.sse.data(Object.assign(this.frame(candidate.model), { choices: [], debug: { echo_upstream_body: generation.sentBody(candidate) } }));
  }

  parts(batch: PartBatch, candidate: Candidate): void {
    const choices = new Map<number, ChoiceChunk>();
    for (const part of batch) {
      if (part.type === "metadata") {
        this.fingerprint ??= part.systemFingerprint ?? null;
        this.serviceTier ??= part.serviceTier ?? null;
      } else if (part.type !== "usage") addPart(choices, part);
    }
    const out = [];
    for (const [index, { delta, choiceFields, finish }] of choices) {
      if (this.loop && !says(delta)) continue;
      out.push(extended(choiceFields, { index, delta, finish_reason: this.loop ? null : normalizeFinishReason(finish), native_finish_reason: this.loop ? null : finish }));
    }
    if (out.length === 0) return;
    this.sse.data(this.chunk(candidate.model, visibleChoices(this.plan.request, out)));
  }

  /** The in-band error frame: after the first byte the status is 200, so the failure travels as data. */
  fail(code: number, message: string, model: string): void {
    this.sse.data(streamErrorChunk(this.plan.generationId, model, code, message, this.created));
  }

  /** The server tool calls of a round, as reasoning entries, unless the request hides reasoning. */
  serverCalls(entries: ServerToolCallDetail[], candidate: Candidate): void {
    if (hidesReasoning(this.plan.request)) return;
    this.sse.data(Object.assign(this.frame(candidate.model), { choices: [{ index: 0, delta: { reasoning_details: entries }, finish_reason: null }] }));
  }

  /** The loop's finish, sent once its last turn has ended. */
  finish(candidate: Candidate, finishReason: string | null, native: string | null): void {
    this.sse.data(Object.assign(this.frame(candidate.model), { choices: [{ index: 0, delta: {}, finish_reason: finishReason ?? "stop", native_finish_reason: native }] }));
  }

  /** The last chunk: empty delta, the whole usage (and metadata when asked), then `[DONE]`. */
  close(candidate: Candidate, usage: ChatUsage, metadata: object): void {
    const last = this.frame(candidate.model);
    if (this.fingerprint) last.system_fingerprint = this.fingerprint;
    this.sse.data(Object.assign(last, { choices: [{ index: 0, delta: {}, finish_reason: null }], usage }, metadata));
    this.sse.done();
  }

  end(): void {
    this.res.end();
  }
}
