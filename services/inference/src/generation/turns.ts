import { metrics } from "@switchyard/runtime";
import { StreamIdleTimeout, UpstreamError, type Candidate } from "@switchyard/upstream";
import { keptBatch } from "../cache/lookup.js";
import { healJson } from "../plugins.js";
import type { UpstreamUsage } from "../providers/types.js";
import { normalizeFinishReason, type Accounted } from "../accounting.js";
import { mergeDetails, type Detail, type DetailNumbering } from "../tools/reasoning.js";
import type { ToolCall } from "../tools/run.js";
import type { Generation } from "./generation.js";
import type { Completion, PartBatch, StreamPart } from "./parts.js";

/** A buffered turn: the answer whole, the endpoint that gave it and what it was charged. */
export interface BufferedTurn {
  completion: Completion;
  candidate: Candidate;
  accounted: Accounted;
}

const wantsJson = (generation: Generation) => {
  const format = generation.plan.request.response_format as { type?: string } | undefined;
  return format?.type === "json_object" || format?.type === "json_schema";
};

/** The names and arguments of tool calls, as the model wrote them: what an estimate of its tokens counts. */
const callText = (calls: readonly ToolCall[]): string => calls.map((c) => c.function.name + c.function.arguments).join("");

/** One provider call, answered whole, priced and recorded. Response healing repairs JSON answers first. */
export async function bufferedTurn(generation: Generation): Promise<BufferedTurn> {
  const { result: completion, candidate } = await generation.complete();
  if (generation.plan.plugins.responseHealing && wantsJson(generation)) {
    for (const choice of completion.choices) if (choice.text !== null) choice.text = healJson(choice.text) ?? choice.text;
  }
  const first = completion.choices[0];
  const accounted = generation.settle({
    candidate,
    status: "completed",
    usage: completion.usage,
    completionText: completion.choices.map((c) => c.text ?? "").join(""),
    reasoningText: completion.choices.map((c) => c.reasoning ?? "").join(""),
    toolCallText: callText(completion.choices.flatMap((c) => c.toolCalls)),
    upstreamId: completion.id,
    finishReason: normalizeFinishReason(first?.finishReason),
    nativeFinishReason: first?.finishReason ?? null,
    serviceTier: completion.serviceTier,
    firstTokenMs: null,
  });
  // Kept without the provider's usage: a replay reports its own, which is zero.
  await generation.keep({ kind: "buffered", completion: { ...completion, usage: undefined } }, candidate);
  return { completion, candidate, accounted };
}

/** Where a streamed turn's output goes: a dialect's renderer, writing server-sent events. */
export interface StreamSink {
  /** Whether anything reached the client: before that a failure is still a plain HTTP error. */
  readonly started: boolean;
  /** Comments while nothing else is sent (a provider thinking, a tool running). */
  keepAlive(on: boolean): void;
  /** The endpoint accepted; its parts follow. */
  accepted(generation: Generation, candidate: Candidate): void;
  parts(batch: PartBatch, candidate: Candidate): void;
  /** The in-band failure; `metadata` is the error's (a rejecting provider's own words: `provider_message`). */
  fail(code: number, message: string, model: string, metadata?: Record<string, unknown>): void;
  /** While the client has not taken what was sent: when it has (or left); undefined while it keeps up. */
  drained?(): Promise<void> | undefined;
}

/**
 * Waits for a slow client to take what was sent before the next provider event is read, so that the provider
 * is read at the client's pace rather than held in memory. The request's end (its deadline, the client
 * leaving) ends the wait and is thrown, as a read that waited on the provider would throw it, so a client that
 * never reads again is ended by the deadline. The provider's idle timer counts only while a read waits on
 * the provider, never here.
 */
async function clientPace(drained: Promise<void>, signal: AbortSignal): Promise<void> {
  if (!signal.aborted) {
    let ended: () => void = () => undefined;
    const aborted = new Promise<void>((resolve) => {
      ended = resolve;
      signal.addEventListener("abort", ended, { once: true });
    });
    try {
      await Promise.race([drained, aborted]);
    } finally {
      signal.removeEventListener("abort", ended);
    }
  }
  if (signal.aborted) throw signal.reason;
}

/**
 * Under the server-tool loop: the calls to server tools are the gateway's to run, so the client sees only
 * its own function calls (renumbered across turns), reasoning entries numbered across turns, and no finish
 * until the loop's last turn.
 */
export interface TurnFilter {
  isServerTool(name: string): boolean;
  /** The next index among the calls the client sees, shared across turns. */
  clientIndex: { next: number };
  numbering: DetailNumbering;
}

/** What one streamed turn produced. */
export interface StreamedTurn {
  status: "completed" | "error" | "cancelled";
  candidate: Candidate;
  accounted: Accounted;
  text: string;
  /** The whole tool calls of the turn. */
  toolCalls: ToolCall[];
  reasoning: string;
  reasoningDetails: Detail[];
  finishReason: string | null;
  nativeFinishReason: string | null;
  fingerprint: string | null;
}

/** A streamed turn's running state: whole calls and reasoning, figures for its record. */
class TurnState {
  text = "";
  reasoning = "";
  readonly details: Detail[] = [];
  readonly calls = new Map<number, ToolCall & { clientIndex: number | undefined }>();
  usage: UpstreamUsage | undefined;
  /** The prompt's tokens as the provider counted them when its answer started, for a stream that reports no more. */
  promptUsage: UpstreamUsage | undefined;
  /** The first id the provider's stream gave its answer. */
  upstreamId: string | null = null;
  fingerprint: string | null = null;
  serviceTier: string | null = null;
  nativeFinish: string | null = null;
  firstTokenMs: number | null = null;

  constructor(private readonly filter: TurnFilter | undefined) {}

  /** Takes in one batch and returns the parts the client sees. */
  read(batch: PartBatch): StreamPart[] {
    const visible: StreamPart[] = [];
    for (const part of batch) {
      const shown = this.readPart(part);
      if (shown) visible.push(shown);
    }
    return visible;
  }

  private readPart(part: StreamPart): StreamPart | undefined {
    const { filter } = this;
    switch (part.type) {
      case "metadata":
        this.upstreamId ??= part.id ?? null;
        this.fingerprint ??= part.systemFingerprint ?? null;
        this.serviceTier ??= part.serviceTier ?? null;
        this.promptUsage ??= part.promptUsage;
        return part;
      case "usage":
        this.usage = part.usage;
        return part;
      case "text":
        this.text += part.text;
        return part;
      case "reasoning":
        this.reasoning += part.text;
        return part;
      case "reasoning-detail":
        mergeDetails(this.details, [part.detail]);
        return filter ? { ...part, detail: filter.numbering.renumber([part.detail])[0]! } : part;
      case "finish":
        this.nativeFinish = part.reason;
        return filter ? undefined : part;
      case "tool-call-start": {
        const clientIndex = filter?.isServerTool(part.name) ? undefined : filter ? filter.clientIndex.next++ : part.index;
        this.calls.set(part.index, { id: part.id, type: "function", function: { name: part.name, arguments: "" }, ...(part.extraContent !== undefined ? { extra_content: part.extraContent } : {}), clientIndex });
        return clientIndex === undefined ? undefined : { ...part, index: clientIndex };
      }
      case "tool-call-delta":
      case "tool-call-end": {
        const call = this.calls.get(part.index);
        if (call && part.type === "tool-call-delta") call.function.arguments += part.arguments;
        if (!filter) return part;
        return call?.clientIndex === undefined ? undefined : { ...part, index: call.clientIndex };
      }
      case "passthrough":
        return part;
    }
  }

  toolCalls(): ToolCall[] {
    return [...this.calls.values()].map(({ id, type, function: fn, extra_content }) => ({ id, type, function: fn, ...(extra_content !== undefined ? { extra_content } : {}) }));
  }
}

const hasChoice = (batch: PartBatch) => batch.some((p) => p.type !== "usage" && p.type !== "metadata");

/** Provider failures whose status clients act on (they retry an overloaded or rate-limited provider later). */
const keptStatuses = new Set([429, 503, 529]);

/**
 * The in-band error's code and message: the gateway's own timeouts say so; a provider's failure is a 502, or
 * its own status when it said it is overloaded or rate limited.
 */
function midStreamFailure(generation: Generation, error: unknown): [number, string] {
  if (generation.plan.timedOut()) return [524, `Request timed out: the gateway's request deadline (${generation.plan.deps.requestTimeoutMs} ms, REQUEST_TIMEOUT_MS) passed mid-stream`];
  if (error instanceof StreamIdleTimeout) return [524, error.message];
  const status = error instanceof UpstreamError && error.status !== null && keptStatuses.has(error.status) ? error.status : 502;
  return [status, "Provider returned error mid-stream"];
}

/**
 * One provider call relayed to `sink`. Until the first byte every failure may fall back to the next endpoint
 * and, while nothing was sent, ends as a plain HTTP error (thrown); after it, a failure is one in-band error
 * and spend is still accounted. Undefined when no endpoint accepted and the sink was told instead.
 */
export async function relayTurn(generation: Generation, sink: StreamSink, filter?: TurnFilter): Promise<StreamedTurn | undefined> {
  const { plan } = generation;
  let attempt;
  try {
    attempt = await generation.stream();
  } catch (error) {
    sink.keepAlive(false);
    if (!sink.started) throw error;
    const failure = error as { status?: number; message?: string; metadata?: Record<string, unknown> };
    sink.fail(failure.status ?? 502, failure.message ?? "Provider returned error", plan.requested, failure.metadata);
    return undefined;
  }
  const { result: batches, candidate } = attempt;
  sink.accepted(generation, candidate);
  const state = new TurnState(filter);
  // A miss that opted in keeps the provider's events, to replay them to the next identical request.
  const kept: StreamPart[][] | undefined = generation.keepsAnswer ? [] : undefined;
  let status: StreamedTurn["status"] = "completed";
  try {
    for await (const batch of batches) {
      sink.keepAlive(false);
      if (kept) {
        const parts = keptBatch(batch);
        if (parts.length) kept.push(parts);
      }
      if (hasChoice(batch)) state.firstTokenMs ??= Math.round(performance.now() - generation.turn.started);
      const visible = state.read(batch);
      if (visible.length) sink.parts(visible, candidate);
      // Only a client that fell behind is waited for: one that keeps up costs no await per event.
      const drained = sink.drained?.();
      if (drained) await clientPace(drained, plan.signal);
    }
  } catch (error) {
    status = plan.signal.aborted && !plan.timedOut() ? "cancelled" : "error";
    if (status === "error") {
      plan.deps.logger.warn({ err: error, provider: candidate.endpoint.provider, generationId: generation.id }, "stream failed after its first byte");
      sink.fail(...midStreamFailure(generation, error), candidate.model);
    }
  } finally {
    sink.keepAlive(false);
  }
  metrics.streamDuration.observe({ service: "inference", status }, (performance.now() - generation.turn.started) / 1000);
  // Whatever happened after the first byte was real work: it is priced and recorded, estimated if need be.
  const finishReason = status === "completed" ? normalizeFinishReason(state.nativeFinish) : status === "error" ? "error" : null;
  const accounted = generation.settle({
    candidate,
    status,
    usage: state.usage,
    promptUsage: state.promptUsage,
    completionText: state.text,
    reasoningText: state.reasoning,
    toolCallText: callText(state.toolCalls()),
    upstreamId: state.upstreamId,
    finishReason,
    nativeFinishReason: state.nativeFinish,
    serviceTier: state.serviceTier,
    firstTokenMs: state.firstTokenMs,
  });
  if (kept && status === "completed") await generation.keep({ kind: "streamed", batches: kept }, candidate);
  return {
    status,
    candidate,
    accounted,
    text: state.text,
    toolCalls: state.toolCalls(),
    reasoning: state.reasoning,
    reasoningDetails: state.details,
    finishReason,
    nativeFinishReason: state.nativeFinish,
    fingerprint: state.fingerprint,
  };
}
