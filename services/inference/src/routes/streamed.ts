import type { ServerResponse } from "node:http";
import { visibleChoices } from "../providers/hide-reasoning.js";
import type { UpstreamUsage } from "../providers/types.js";
import { normalizeFinishReason, usageBody, type Accounted } from "../responses.js";
import { sseWriter } from "../sse.js";
import { mergeDetails, type Detail, type DetailNumbering } from "../tools/reasoning.js";
import type { ToolCall } from "../tools/run.js";
import { accepted, type ChatContext } from "./chat-completions.js";
import { accountAbandoned, finish, metadataFor } from "./finish.js";
import { firstEventThenIdle, StreamIdleTimeout, type Candidate } from "@switchyard/upstream";
import { streamErrorChunk } from "@switchyard/contracts";
import { metrics } from "@switchyard/runtime";

const keepAliveMs = 2000;

export type Sse = ReturnType<typeof sseWriter>;

/** `: OPENROUTER PROCESSING` comments while nothing else is sent: a provider thinking, a tool running. */
export function keepAlive(sse: Sse) {
  let timer: NodeJS.Timeout | undefined;
  return {
    start() {
      timer ??= setInterval(() => sse.comment("OPENROUTER PROCESSING"), keepAliveMs);
    },
    stop() {
      clearInterval(timer);
      timer = undefined;
    },
  };
}

/** What one streamed turn produced, for the answer and for the agent loop. */
export interface StreamedTurn {
  status: "completed" | "error" | "cancelled";
  candidate: Candidate;
  accounted: Accounted;
  text: string;
  /** The whole tool calls of the turn, for the agent loop (empty without a relay filter). */
  toolCalls: ToolCall[];
  /** The turn's reasoning, whole, for the agent loop to send back next turn (empty without a relay filter). */
  reasoning: string;
  reasoningDetails: Detail[];
  finishReason: string | null;
  nativeFinishReason: string | null;
  fingerprint: string | null;
}

/**
 * Relays server tool calls' deltas or not: the agent loop runs those calls itself, so the client sees only
 * its own function calls (renumbered), and no finish reason until the loop's last turn.
 */
export interface RelayFilter {
  isServerTool(name: string): boolean;
  /** The next index among the calls the client sees, shared across turns. */
  clientIndex: { next: number };
  /** Reasoning entries' indexes as the client sees them, shared across turns. */
  numbering: DetailNumbering;
}

export interface RelayOptions {
  sse: Sse;
  created: number;
  alive: ReturnType<typeof keepAlive>;
  filter?: RelayFilter;
}

/** The in-band error frame: after the first byte the status is 200, so the failure travels as data. */
export function errorFrame(context: ChatContext, sse: Sse, created: number, model: string, code: number, message: string) {
  sse.data(streamErrorChunk(context.generationId, model, code, message, created));
}

/**
 * One provider call relayed as chunks. Until the first byte every failure may fall back to the next endpoint
 * and, while nothing was sent, ends as a plain HTTP error (thrown); after it, a failure is one in-band error
 * frame and spend is still accounted. Undefined when no endpoint accepted and the frame was sent instead.
 */
export async function relayTurn(context: ChatContext, options: RelayOptions): Promise<StreamedTurn | undefined> {
  const { sse, created, alive, filter } = options;
  let attempt;
  try {
    // Accepted at the stream's first event, not its headers: a provider silent after its headers is a first-byte timeout.
    attempt = await accepted(context, async (provider, target, body, upstream) =>
      firstEventThenIdle(await provider.stream(body, target, upstream.signal), upstream, target.provider, context.deps.timeouts.idleMs),
    );
  } catch (error) {
    alive.stop();
    accountAbandoned(context);
    if (!sse.started) throw error;
    const failure = error as { status?: number; message?: string };
    errorFrame(context, sse, created, context.requested, failure.status ?? 502, failure.message ?? "Provider returned error");
    return undefined;
  }
  const { result: chunks, candidate } = attempt;
  const frame = { id: context.generationId, object: "chat.completion.chunk", created, model: candidate.model };
  // Debugging aid: the exact body the serving endpoint received, before any of its output.
  if (context.request.debug?.echo_upstream_body) sse.data({ ...frame, choices: [], debug: { echo_upstream_body: context.sentBody.get(candidate) } });
  let text = "";
  let usage: UpstreamUsage | undefined;
  let fingerprint: string | null = null;
  let serviceTier: string | null = null;
  let nativeFinish: string | null = null;
  let firstTokenMs: number | null = null;
  let status: StreamedTurn["status"] = "completed";
  const calls = new Map<number, ToolCall & { clientIndex: number | undefined }>();
  let reasoning = "";
  const reasoningDetails: Detail[] = [];
  try {
    for await (const chunk of chunks) {
      alive.stop();
      usage = chunk.usage ?? usage;
      fingerprint ??= chunk.systemFingerprint;
      serviceTier ??= chunk.serviceTier;
      if (chunk.choices.length === 0) continue;
      firstTokenMs ??= Math.round(performance.now() - context.started);
      const choices = [];
      for (const [i, choice] of chunk.choices.entries()) {
        let delta = (choice.delta ?? {}) as Record<string, unknown>;
        if (typeof delta.content === "string") text += delta.content;
        if (choice.finish_reason) nativeFinish = String(choice.finish_reason);
        // Only the agent loop looks into tool calls and reasoning; a plain stream relays its deltas untouched.
        if (filter && Array.isArray(delta.tool_calls)) {
          delta = { ...delta, tool_calls: collectToolCalls(delta.tool_calls as Array<Record<string, unknown>>, calls, filter) };
          if ((delta.tool_calls as unknown[]).length === 0) delete delta.tool_calls;
        }
        if (typeof delta.reasoning === "string") reasoning += delta.reasoning;
        if (filter && Array.isArray(delta.reasoning_details)) {
          const pieces: Detail[] = [];
          mergeDetails(pieces, delta.reasoning_details);
          mergeDetails(reasoningDetails, pieces);
          delta = { ...delta, reasoning_details: filter.numbering.renumber(pieces) };
          if (pieces.length === 0) delete delta.reasoning_details;
        }
        const finishReason = filter ? null : normalizeFinishReason(choice.finish_reason);
        // Under the agent loop a chunk left with nothing to say (a server call's delta, a finish) is not sent.
        if (filter && finishReason === null && Object.keys(delta).every((k) => k === "role" || delta[k] === null || delta[k] === "")) continue;
        choices.push({
          ...choice,
          index: typeof choice.index === "number" ? choice.index : i,
          delta,
          finish_reason: finishReason,
          native_finish_reason: filter ? null : (choice.finish_reason ?? null),
        });
      }
      if (choices.length === 0) continue;
      sse.data({ ...frame, ...(fingerprint ? { system_fingerprint: fingerprint } : {}), ...(serviceTier ? { service_tier: serviceTier } : {}), choices: visibleChoices(context.request, choices) });
    }
  } catch (error) {
    status = context.signal.aborted && !context.timedOut() ? "cancelled" : "error";
    if (status === "error") {
      context.deps.logger.warn({ err: error, provider: candidate.endpoint.provider, generationId: context.generationId }, "stream failed after its first byte");
      errorFrame(context, sse, created, candidate.model, ...midStreamFailure(context, error));
    }
  } finally {
    alive.stop();
  }
  metrics.streamDuration.observe({ service: "inference", status }, (performance.now() - context.started) / 1000);
  // Whatever happened after the first byte was real work: it is priced and recorded, estimated if need be.
  const finishReason = status === "completed" ? normalizeFinishReason(nativeFinish) : status === "error" ? "error" : null;
  const accounted = finish(context, {
    candidate,
    status,
    usage,
    completionText: text,
    reasoningText: reasoning,
    upstreamId: null,
    finishReason,
    nativeFinishReason: nativeFinish,
    serviceTier,
    firstTokenMs,
  });
  const toolCalls = [...calls.values()].map(({ id, type, function: fn }) => ({ id, type, function: fn }));
  return { status, candidate, accounted, text, toolCalls, reasoning, reasoningDetails, finishReason, nativeFinishReason: nativeFinish, fingerprint };
}

/** The in-band error's code and message: the gateway's own timeouts say so, a provider's failure is the provider's. */
function midStreamFailure(context: ChatContext, error: unknown): [number, string] {
  if (context.timedOut()) return [524, `Request timed out: the gateway's request deadline (${context.deps.requestTimeoutMs} ms, REQUEST_TIMEOUT_MS) passed mid-stream`];
  if (error instanceof StreamIdleTimeout) return [524, error.message];
  return [502, "Provider returned error mid-stream"];
}

/**
 * Adds the deltas of streamed tool calls to `calls` (the whole calls, for the agent loop) and returns the
 * deltas the client should see: only its own function calls, renumbered.
 */
function collectToolCalls(deltas: Array<Record<string, unknown>>, calls: Map<number, ToolCall & { clientIndex: number | undefined }>, filter: RelayFilter) {
  const visible = [];
  for (const delta of deltas) {
    const index = typeof delta.index === "number" ? delta.index : 0;
    const fn = (delta.function ?? {}) as { name?: string; arguments?: string };
    let call = calls.get(index);
    if (!call) {
      const name = fn.name ?? "";
      const clientIndex = filter.isServerTool(name) ? undefined : filter.clientIndex.next++;
      call = { id: typeof delta.id === "string" ? delta.id : `call_${index}`, type: "function", function: { name, arguments: "" }, clientIndex };
      calls.set(index, call);
    }
    if (typeof fn.arguments === "string") call.function.arguments += fn.arguments;
    if (call.clientIndex !== undefined) visible.push({ ...delta, index: call.clientIndex });
  }
  return visible;
}

/** The last chunk: empty delta, the whole usage (and metadata when asked), then `[DONE]`. */
export function closeStream(context: ChatContext, sse: Sse, turn: StreamedTurn, created: number, usage: ReturnType<typeof usageBody>) {
  const frame = { id: context.generationId, object: "chat.completion.chunk", created, model: turn.candidate.model };
  sse.data({ ...frame, ...(turn.fingerprint ? { system_fingerprint: turn.fingerprint } : {}), choices: [{ index: 0, delta: {}, finish_reason: null }], usage, ...metadataFor(context, turn.candidate) });
  sse.done();
}

/** A streamed completion without server tools: one relayed turn. */
export async function streamedCompletion(context: ChatContext, res: ServerResponse): Promise<void> {
  const sse = sseWriter(res, { "x-generation-id": context.generationId });
  const alive = keepAlive(sse);
  alive.start();
  const created = Math.floor(Date.now() / 1000);
  const turn = await relayTurn(context, { sse, created, alive });
  if (turn?.status === "completed") closeStream(context, sse, turn, created, usageBody(turn.accounted));
  res.end();
}
