import type { ProviderPreferences } from "@switchyard/contracts";
import { callerOf, forbidden, headerOf, picoToUsd, type Caller, type GenerationOperation } from "@switchyard/runtime";
import {
  capCharge,
  firstAcceptingHeld,
  newGenerationId,
  requestDeadline,
  requestFilters,
  withWorkspaceKeys,
  type Attempt,
  type CompiledFilters,
  type Finding,
  type AttemptSignal,
  type Candidate,
  type Charge,
  type UpstreamTarget,
} from "@switchyard/upstream";
import type { Request, Response } from "express";
import type { Presetted } from "./body.js";
import { mediaCost, type MediaUsage } from "./cost.js";
import type { MediaDeps } from "./deps.js";
import { recordGeneration, type MediaGeneration } from "./record.js";
import { attributionOf, type Attribution } from "./request-context.js";
import { routeModels, type Modality, type ModelChoice } from "./resolution.js";

/** One transcription, image or speech request on its way through the endpoints of its models. */
export interface MediaRun<P> {
  deps: MediaDeps;
  kind: Modality;
  caller: Caller;
  generationId: string;
  candidates: Candidate[];
  providers: Readonly<Record<string, P>>;
  guardrailIds: string[];
  /** The guardrails' content filters, for the prompt the route sends. */
  filters: CompiledFilters;
  /** What they redacted or flagged in it, recorded on the generation. */
  findings: Finding[];
  /** Its workspace broadcasts its generations. */
  broadcast: boolean;
  /** The request's end user (`user`) as the caller named it, for the generation's record only. */
  externalUser: string | null;
  /** The preset its model named, recorded on the generation. */
  presetId: string | null;
  attribution: Attribution;
  /** The client asked for a stream. */
  streamed: boolean;
  attempts: Attempt[];
  signal: AbortSignal;
  timedOut: () => boolean;
  started: number;
  requestId: string | null;
  trace: Record<string, unknown> | undefined;
  /** What its attempts do, as their trace spans name it. */
  operation: GenerationOperation;
}

/** Each modality's operation, as the GenAI conventions name it. */
const operationOf = { transcription: "transcription", image: "image_generation", speech: "speech" } as const;

export interface RunOptions<P> {
  /** The model, then its fallbacks (see `modelList`). */
  models: ModelChoice[];
  /** The preset the model named, already applied to the request. */
  preset: Presetted | undefined;
  /** The output modality the models must have. */
  modality: Modality;
  preferences: ProviderPreferences | undefined;
  /** The body's `session_id`. */
  sessionId: string | undefined;
  /** The client asked for a stream. */
  streamed: boolean;
  providers: Readonly<Record<string, P>>;
  /** Why this endpoint (its wire format, or what the catalog says it supports) cannot serve the request; undefined when it can. */
  unfit: (provider: P, candidate: Candidate) => string | undefined;
  /** The request's tracing metadata, for broadcast destinations. */
  trace: Record<string, unknown> | undefined;
  /** The request's end user, recorded on the generation. */
  user: string | undefined;
}

/** The caller of a media request: an inference key (a management key is refused with 403). */
export function inferenceCaller(res: Response): Caller {
  const caller = callerOf(res);
  if (caller.management) throw forbidden("Management keys cannot be used for inference; use an inference key");
  return caller;
}

/**
 * Resolves the models to the endpoints this key may use that can serve the request, in routing order, and
 * starts the deadline shared by all attempts (a client going away aborts the upstream call too).
 */
export async function startRun<P>(deps: MediaDeps, req: Request, res: Response, options: RunOptions<P>): Promise<MediaRun<P>> {
  const caller = inferenceCaller(res);
  const attribution = attributionOf(req.headers, options.sessionId);
  const routed = await routeModels(deps, req, caller, { ...options, sessionId: attribution.sessionId ?? undefined });
  // The workspace's own keys go first where it brought one.
  const keyed = await withWorkspaceKeys(routed.candidates, (provider) => deps.providerKey(caller.workspaceId, provider));
  const { signal, timedOut } = requestDeadline(res, deps.requestTimeoutMs);
  const generationId = newGenerationId();
  res.setHeader("X-Generation-Id", generationId);
  return {
    deps,
    kind: options.modality,
    caller,
    generationId,
    candidates: keyed,
    providers: options.providers,
    guardrailIds: routed.guardrailIds,
    filters: requestFilters(routed.contentFilters),
    findings: [],
    broadcast: routed.broadcast,
    externalUser: options.user ?? null,
    presetId: options.preset?.preset.id ?? null,
    attribution,
    streamed: options.streamed,
    attempts: [],
    signal,
    timedOut,
    started: performance.now(),
    requestId: headerOf(req.headers, "x-request-id") ?? null,
    trace: options.trace,
    operation: operationOf[options.modality],
  };
}

/** The endpoint serving a generation and the worst case its attempt held: the most the generation is charged. */
export interface Served {
  candidate: Candidate;
  held: bigint;
}

/** What an attempt on an endpoint may cost, and what it is charged when its client leaves. */
export interface AttemptCosts {
  /** The most one attempt can cost: what it holds. */
  worstCase: (candidate: Candidate) => bigint;
  /** The usage the provider was asked to make, estimated: charged, at most at the hold, when the client leaves while the provider works. */
  asked: (candidate: Candidate) => MediaUsage;
}

/**
 * Tries the endpoints in order, holding each attempt's worst case first. When none accepts, the hold is
 * released and the caller hears the most telling failure (402/403 from the hold, 429, 502, 524, 529). A
 * client that leaves while a provider works on its request leaves a cancelled generation, charged what
 * the provider was asked to make.
 */
export async function firstAccepted<P, T>(
  run: MediaRun<P>,
  costs: AttemptCosts,
  call: (provider: P, target: UpstreamTarget, candidate: Candidate, attempt: AttemptSignal) => Promise<T>,
): Promise<Served & { result: T }> {
  const { deps } = run;
  const context = { env: deps.env, cooldowns: deps.cooldowns, stats: deps.stats, logger: deps.logger, signal: run.signal, timeouts: deps.timeouts, operation: run.operation };
  const hold = { holds: deps.holds, generationId: run.generationId, keyHash: run.caller.keyHash, ttlMs: deps.holdTtlMs };
  const abandoned = (candidate: Candidate, held: bigint) => {
    const usage = costs.asked(candidate);
    const charge = chargeFor(run, { candidate, held }, usage);
    // Not awaited: nobody waits for the answer. The record is written, or kept until it can be; what counts it
    // before that may still throw.
    recordGeneration(deps, { ...runRecord(run, candidate, run.streamed), status: "cancelled", usage, usageEstimated: true, charge }).catch((err: unknown) =>
      deps.logger.error({ err, generationId: run.generationId }, "a cancelled media generation could not be recorded"),
    );
  };
  return firstAcceptingHeld(run.providers, run.candidates, context, run.attempts, { hold, timedOut: run.timedOut, abandoned }, costs.worstCase, call);
}

/** What a generation is charged: its usage at the serving endpoint's prices, capped at what its attempt held. */
export function chargeFor(run: MediaRun<unknown>, served: Served, usage: MediaUsage): Charge {
  return capCharge({
    logger: run.deps.logger,
    generationId: run.generationId,
    provider: served.candidate.endpoint.provider,
    model: served.candidate.model,
    held: served.held,
    reported: mediaCost(served.candidate.endpoint.pricing, usage),
    beyondHold: run.deps.chargeBeyondHold,
    usage,
  });
}

/** What recording a generation needs of its run and the endpoint that served it, beside its outcome, usage and charge. */
export const runRecord = (
  run: MediaRun<unknown>,
  candidate: Candidate,
  streamed: boolean,
): Omit<MediaGeneration, "usage" | "usageEstimated" | "charge" | "status"> => ({
  id: run.generationId,
  kind: run.kind,
  keyHash: run.caller.keyHash,
  organizationId: run.caller.organizationId,
  workspaceId: run.caller.workspaceId,
  guardrailIds: run.guardrailIds,
  findings: run.findings,
  broadcast: run.broadcast,
  isByok: candidate.byokKey !== undefined,
  externalUser: run.externalUser,
  requestId: run.requestId,
  presetId: run.presetId,
  attribution: run.attribution,
  model: candidate.model,
  provider: candidate.endpoint.provider,
  streamed,
  latencyMs: Math.round(performance.now() - run.started),
  attempts: run.attempts,
  trace: run.trace,
});

/** What the gateway bills for a served generation: nothing when it ran on the workspace's own key (BYOK). */
export const billedUsd = (served: Served, charge: Charge): number => picoToUsd(served.candidate.byokKey ? 0n : charge.charged);
