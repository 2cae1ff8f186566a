import type { GenerationContent } from "@switchyard/contracts";
import { extended, HttpError } from "@switchyard/runtime";
import { capCharge, findingsRecord, firstEventThenIdle, leftWhileWorking, noteGeneration, upstreamFailure, type AttemptSignal, type Candidate, type Finding, type UpstreamTarget } from "@switchyard/upstream";
import type { Attempt } from "../generations/store.js";
import { dropUnsupported } from "../parameters.js";
import { withOutputLimit } from "../request-body.js";
import { compressMessages } from "../plugins.js";
import type { ChatProvider } from "../providers/types.js";
import { account, estimatedAnswer, metadataBody, type Accounted } from "../accounting.js";
import { hitAccounted, keepAnswer, replay } from "../cache/lookup.js";
import type { CachedAnswer } from "../cache/store.js";
import { firstAccepting, speaksOwnBody, wireFor, type Wire } from "../routing/attempts.js";
import type { Completion, PartBatch, UpstreamUsage } from "./parts.js";
import type { Plan } from "./plan.js";
import { chargedTier } from "../spend/service-tier.js";
import { SpendHold } from "./hold.js";

/** How one generation ended, as it is priced and recorded. */
export interface Outcome {
  candidate: Candidate;
  status: "completed" | "error" | "cancelled";
  usage: UpstreamUsage | undefined;
  /** The prompt's usage a stream reported at its start (Anthropic's `message_start`), used when `usage` never came. */
  promptUsage?: UpstreamUsage | undefined;
  completionText: string;
  /** The reasoning the answer carried, for input/output logging and an estimate of its tokens. */
  reasoningText?: string;
  /** The tool calls' names and arguments the answer carried, for an estimate of its tokens. */
  toolCallText?: string;
  upstreamId: string | null;
  finishReason: string | null;
  nativeFinishReason: string | null;
  serviceTier: string | null;
  firstTokenMs: number | null;
}

/** What one generation's turn is: the plan's, or a server-tool turn's own id, body, clock and findings. */
export interface Turn {
  id: string;
  body: Record<string, unknown>;
  started: number;
  findings: readonly Finding[];
}

/**
 * A dialect's own wire format, for the endpoints whose adapter speaks it: they get the request as the client
 * wrote it (the legacy prompt, the Messages body) instead of a translation of the chat body.
 */
export interface OwnWire {
  readonly wire: Wire;
  /** The body such an endpoint gets, made from the chat body it would otherwise get (unsupported parameters dropped). */
  body(chatBody: Record<string, unknown>): Record<string, unknown>;
  /** Headers of the client's that such an endpoint gets too. */
  readonly headers?: Readonly<Record<string, string>>;
}

/** The generation of a request without server tools, named by the request's id. */
export function planGeneration(plan: Plan, own?: OwnWire): Generation {
  return new Generation(plan, { id: plan.generationId, body: { ...plan.body }, started: plan.started, findings: plan.findings }, own);
}

/**
 * One call of a model: its attempts over the plan's endpoints, its spend hold and its record. A request is
 * one generation; under the server-tool loop each turn is one of its own.
 */
export class Generation {
  readonly attempts: Attempt[] = [];
  private readonly hold: SpendHold;
  private readonly dropped = new Map<Candidate, string[]>();
  private readonly sent = new Map<Candidate, Record<string, unknown>>();
  /** When the latest attempt was sent (after its hold), which the endpoint's statistics time from. */
  private dispatched: number | undefined;
  /** The answer is the response cache's, replayed: no provider is called and nothing is held or charged. */
  private replaying = false;

  constructor(
    readonly plan: Plan,
    readonly turn: Turn,
    private readonly own?: OwnWire,
  ) {
    this.hold = new SpendHold(plan.deps, turn.id, plan.caller.keyHash);
  }

  get id(): string {
    return this.turn.id;
  }

  /** The request's cache hit, which only the request's own generation (not a later server-tool turn) replays. */
  private cacheHit() {
    const hit = this.plan.cache?.hit;
    return hit && this.turn.id === this.plan.generationId ? hit : undefined;
  }

  /** Whether this generation's answer, if it completes, is kept in the response cache (a miss that opted in). */
  get keepsAnswer(): boolean {
    return this.plan.cache !== undefined && !this.replaying && this.turn.id === this.plan.generationId;
  }

  /** The whole answer of the first endpoint that accepts (or of the response cache, on a hit). */
  complete(): Promise<{ result: Completion; candidate: Candidate }> {
    const hit = this.cacheHit();
    if (hit?.entry.answer.kind === "buffered") {
      this.replaying = true;
      return Promise.resolve({ result: hit.entry.answer.completion, candidate: hit.candidate });
    }
    return this.accept((provider, target, body, { signal }) => provider.complete(body, target, signal));
  }

  /**
   * The stream of the first endpoint that accepts, accepted at its first event (not its headers): a provider
   * silent after its headers is a first-byte timeout.
   */
  stream(): Promise<{ result: AsyncIterable<PartBatch>; candidate: Candidate }> {
    const hit = this.cacheHit();
    if (hit?.entry.answer.kind === "streamed") {
      this.replaying = true;
      return Promise.resolve({ result: replay(hit.entry.answer.batches), candidate: hit.candidate });
    }
    const { idleMs } = this.plan.deps.timeouts;
    return this.accept(async (provider, target, body, attempt) => firstEventThenIdle(await provider.stream(body, target, attempt.signal), attempt, target.provider, idleMs));
  }

  /**
   * Tries the candidates, holding each attempt's worst case first. When none accepts, the hold is released
   * (or, when the client left mid-attempt, the attempt is recorded as cancelled) and the caller gets the most
   * telling failure.
   */
  private async accept<T>(call: (provider: ChatProvider, target: UpstreamTarget, body: Record<string, unknown>, attempt: AttemptSignal) => Promise<T>) {
    const { plan } = this;
    const { deps } = plan;
    try {
      const accepted = await firstAccepting(this.own?.wire ?? wireFor(plan.dialect, this.turn.body), plan.candidates, { env: deps.env, cooldowns: deps.cooldowns, stats: deps.stats, logger: deps.logger, signal: plan.signal, timeouts: deps.timeouts }, this.attempts, async (provider, target, candidate, attempt) => {
        const { own } = this;
        const body = this.bodyFor(candidate, own && speaksOwnBody(provider) ? undefined : provider);
        await this.hold.reserve(candidate, body);
        this.dispatched = performance.now();
        // debug.echo_upstream_body: the body as the adapter posts it.
        const to = plan.request.debug?.echo_upstream_body ? { ...target, sent: (wire: Record<string, unknown>) => this.sent.set(candidate, wire) } : target;
        try {
          if (!own || !speaksOwnBody(provider)) return await call(provider, to, body, attempt);
          return await call(provider, own.headers ? { ...to, headers: own.headers } : to, own.body(body), attempt);
        } catch (error) {
          if (!leftWhileWorking(error, plan.signal)) this.hold.attemptFailed(candidate);
          throw error;
        }
      });
      // Sticky routing: the session's next request goes to the endpoint that took this one.
      if (plan.sessionId) deps.sessions.served(plan.caller.workspaceId, plan.sessionId, accepted.candidate.model, accepted.candidate.endpoint.provider);
      return accepted;
    } catch (error) {
      const abandoned = this.hold.abandonedBy(plan.signal, plan.timedOut());
      if (abandoned) this.settle({ candidate: abandoned, status: "cancelled", usage: undefined, completionText: "", upstreamId: null, finishReason: null, nativeFinishReason: null, serviceTier: null, firstTokenMs: null });
      else await this.hold.release();
      throw error instanceof HttpError ? error : upstreamFailure(error, plan.timedOut());
    }
  }

  /**
   * The body one endpoint gets: without the sampling parameters it does not support, its output limits at
   * most the endpoint's (as the hold counts them), and with the middle of the conversation trimmed to its
   * context window when context compression is on. What the adapter that
   * translates it leaves out (`translator`'s `leftOut`) is named with the unsupported parameters.
   */
  private bodyFor(candidate: Candidate, translator: ChatProvider | undefined): Record<string, unknown> {
    const supported = dropUnsupported(this.turn.body, candidate.endpoint.supported_parameters);
    const dropped = supported.dropped;
    // The output limits as the hold reads them, so that no adapter sends more than the hold covers.
    const limited = withOutputLimit(supported.body, candidate.endpoint.max_completion_tokens);
    // Fields only the translating adapter's wire has a place for.
    const request = this.plan.request as Record<string, unknown>;
    const read = translator?.reads?.filter((name) => request[name] !== undefined) ?? [];
    const body = read.length ? { ...limited, ...Object.fromEntries(read.map((name) => [name, request[name]])) } : limited;
    const unsent = translator?.leftOut?.(body).filter((name) => !dropped.includes(name)) ?? [];
    this.dropped.set(candidate, [...dropped, ...unsent]);
    if (!this.plan.plugins.contextCompression || !Array.isArray(body.messages)) return body;
    const reserve = Number(body.max_completion_tokens ?? body.max_tokens ?? candidate.endpoint.max_completion_tokens ?? 0);
    return { ...body, messages: compressMessages(body.messages as Array<Record<string, unknown>>, candidate.endpoint.context_length - reserve) };
  }

  /** The exact body the adapter posted to `candidate`, when the request asked for it (debug.echo_upstream_body). */
  sentBody(candidate: Candidate): Record<string, unknown> | undefined {
    return this.sent.get(candidate);
  }

  /**
   * Prices the outcome with the one cost function, caps the charge at the worst case held for it, and queues
   * its record and event (committed together a few milliseconds later, in a batch), which settle the hold.
   */
  settle(outcome: Outcome, findings: readonly Finding[] = this.turn.findings): Accounted {
    const { plan, turn } = this;
    const { candidate } = outcome;
    // A cache hit is its own generation at no cost: its record says whose answer it replayed.
    const source = this.replaying ? plan.cache?.hit?.entry.generationId : undefined;
    const accounted = source !== undefined ? hitAccounted() : this.priced(outcome);
    const { charge } = accounted;
    this.keepContent(outcome);
    noteGeneration(turn.id, candidate, accounted.usage, charge.charged, { id: outcome.upstreamId, finishReason: outcome.finishReason, status: outcome.status });
    plan.deps.recorder.record({
      id: turn.id,
      keyHash: plan.caller.keyHash,
      organizationId: plan.caller.organizationId,
      workspaceId: plan.caller.workspaceId,
      guardrailIds: [...plan.guardrailIds],
      contentFilters: findingsRecord(findings),
      presetId: plan.presetId,
      isByok: accounted.isByok,
      attribution: plan.attribution,
      broadcast: plan.broadcast,
      requestId: plan.requestId,
      sessionId: plan.sessionId ?? null,
      trace: plan.request.trace,
      model: candidate.model,
      requestedModel: plan.requested,
      provider: candidate.endpoint.provider,
      // A replayed answer called no provider: the id it carries is the original's.
      upstreamId: source === undefined ? outcome.upstreamId : null,
      status: outcome.status,
      streamed: plan.request.stream === true,
      finishReason: outcome.finishReason,
      nativeFinishReason: outcome.nativeFinishReason,
      promptTokens: accounted.usage.promptTokens,
      completionTokens: accounted.usage.completionTokens,
      reasoningTokens: accounted.usage.reasoningTokens,
      cachedTokens: accounted.usage.cachedTokens,
      usageEstimated: accounted.estimated,
      charge,
      latencyMs: outcome.firstTokenMs,
      generationTimeMs: Math.round(performance.now() - turn.started),
      ...(this.dispatched === undefined ? {} : { dispatchMs: Math.round(this.dispatched - turn.started) }),
      serviceTier: outcome.serviceTier,
      dataRegion: candidate.endpoint.region,
      attempts: this.attempts,
      excluded: plan.excluded,
      cacheDiscount: accounted.cacheDiscount ?? null,
      ...(source !== undefined ? { cacheSourceId: source, upstreamModel: candidate.endpoint.upstream_model } : {}),
    });
    return accounted;
  }

  /**
   * The outcome at the endpoint's prices, its charge capped at the worst case held for it. A stream whose
   * provider counted the prompt at its start and reported no final usage keeps that count; only the
   * answer's tokens are estimated, and the usage says it is estimated.
   */
  private priced(outcome: Outcome): Accounted {
    const { plan, turn } = this;
    const { candidate } = outcome;
    const tier = chargedTier(outcome.serviceTier, turn.body.service_tier);
    const prompt = outcome.usage === undefined ? outcome.promptUsage : undefined;
    const priced = prompt
      ? { ...account(candidate, { ...prompt, ...estimatedAnswer(outcome) }, () => "", outcome, tier), estimated: true }
      : account(candidate, outcome.usage, () => JSON.stringify(turn.body.messages), outcome, tier);
    const charge = capCharge({
      logger: plan.deps.logger,
      generationId: turn.id,
      provider: candidate.endpoint.provider,
      model: candidate.model,
      held: this.hold.settle(candidate),
      reported: priced.cost.total,
      beyondHold: plan.deps.chargeBeyondHold,
      usage: priced.usage,
    });
    const isByok = candidate.byokKey !== undefined;
    return extended(priced, { charge, isByok, billed: isByok ? 0n : charge.charged });
  }

  /** A miss that opted in keeps its completed answer; before the answer ends, so the next request finds it. */
  async keep(answer: CachedAnswer, candidate: Candidate): Promise<void> {
    const { cache, deps, caller } = this.plan;
    if (!cache || !this.keepsAnswer) return;
    await keepAnswer(deps.responseCache, deps.logger, caller.workspaceId, cache, { generationId: this.id, provider: candidate.endpoint.provider, model: candidate.model, answer });
  }

  /**
   * Input/output logging: a workspace that turned it on keeps, for the share of generations it sampled, what
   * the provider was sent (after the guardrails' content filters) and what it answered, in storage for its
   * retention. Handed over after the answer, off the request's path: a failure to keep it is logged, never
   * the caller's problem.
   */
  private keepContent(outcome: Outcome): void {
    const { plan, turn } = this;
    if (!plan.logContent || outcome.status === "cancelled") return;
    const failed = this.attempts.filter((a) => a.status !== 200);
    const content: GenerationContent = {
      input: { messages: Array.isArray(turn.body.messages) ? turn.body.messages : [] },
      output: { completion: outcome.completionText || null, reasoning: outcome.reasoningText || null },
      error:
        outcome.status === "error"
          ? {
              message: "The provider's stream failed after its first byte",
              status: null,
              provider_name: outcome.candidate.endpoint.provider,
              raw: null,
              previous_errors: failed.map((a) => ({ code: a.status ?? 0, message: a.error ?? "", provider_name: a.provider, raw: null })),
            }
          : null,
    };
    const { caller, deps } = plan;
    deps.content
      .save({ generation_id: turn.id, organization_id: caller.organizationId, workspace_id: caller.workspaceId, content })
      .catch((error: unknown) => deps.logger.warn({ err: error, generationId: turn.id }, "could not keep the generation's content for input/output logging"));
  }

  /** `openrouter_metadata` when the request asked for it, for the endpoint that served; timed from `started`. */
  metadata(candidate: Candidate, findings: readonly Finding[], started = this.turn.started) {
    const { plan } = this;
    if (!plan.wantsMetadata) return {};
    return {
      openrouter_metadata: metadataBody({
        requested: plan.requested,
        candidates: plan.candidates,
        selected: candidate,
        basis: plan.orderBasis,
        attempt: this.attempts.length,
        generationTimeMs: Math.round(performance.now() - started),
        region: candidate.endpoint.region,
        dropped: this.dropped.get(candidate) ?? [],
        contentFilters: findingsRecord(findings),
      }),
    };
  }
}
