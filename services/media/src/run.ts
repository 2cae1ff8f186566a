import { sessionIdHeader, type ProviderPreferences } from "@switchyard/contracts";
import { badRequest, callerOf, forbidden, headerOf, HttpError, picoToUsd, requestHost, type Caller, type GenerationOperation } from "@switchyard/runtime";
import {
  capCharge,
  firstAcceptingHeld,
  newGenerationId,
  orderCandidates,
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
import { mediaCost, type MediaUsage } from "./cost.js";
import type { MediaDeps } from "./deps.js";
import type { MediaGeneration } from "./record.js";

/** What a model of each output modality is called when a request names a model of another. */
const modalityNames = { transcription: "a transcription model", image: "an image generation model", speech: "a text-to-speech model" } as const;

/** One transcription, image or speech request on its way through the endpoints of its model. */
export interface MediaRun<P> {
  deps: MediaDeps;
  caller: Caller;
  generationId: string;
  model: string;
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
  model: string;
  /** The output modality the model must have. */
  modality: keyof typeof modalityNames;
  preferences: ProviderPreferences | undefined;
  sessionId: string | undefined;
  providers: Readonly<Record<string, P>>;
  /** Why this endpoint (its wire format, or what the catalog says it supports) cannot serve the request; undefined when it can. */
  unfit: (provider: P, candidate: Candidate) => string | undefined;
  /** The request's tracing metadata, for broadcast destinations. */
  trace: Record<string, unknown> | undefined;
  /** The request's end user, recorded on the generation. */
  user: string | undefined;
}

/**
 * Resolves the model to the endpoints this key may use that can serve the request, in routing order, and
 * starts the deadline shared by all attempts (a client going away aborts the upstream call too).
 */
export async function startRun<P>(deps: MediaDeps, req: Request, res: Response, options: RunOptions<P>): Promise<MediaRun<P>> {
  const caller = callerOf(res);
  if (caller.management) throw forbidden("Management keys cannot be used for inference; use an inference key");
  const resolved = await deps.resolve({
    model: options.model,
    // No model named: the workspace's default for the modality (images only; a transcription names its model).
    ...(options.model ? {} : { defaultFor: "image" as const }),
    keyHash: caller.keyHash,
    workspaceId: caller.workspaceId,
    organizationId: caller.organizationId,
    host: requestHost(req.headers),
  });
  if (!resolved.output_modalities.includes(options.modality)) {
    throw badRequest(`Invalid body: model: ${resolved.model} is not ${modalityNames[options.modality]}`);
  }
  const ordered = orderCandidates(resolved, {
    preferences: options.preferences,
    sessionId: options.sessionId ?? headerOf(req.headers, sessionIdHeader),
    requestedParameters: [],
    coolingDown: deps.cooldowns.coolingDown,
    figuresOf: deps.stats.figures,
  });
  const unfit: string[] = [];
  const candidates = ordered.candidates.filter((c) => {
    const provider = options.providers[c.endpoint.adapter];
    const reason = provider ? options.unfit(provider, c) : `no ${options.modality} support in the ${c.endpoint.adapter} adapter`;
    if (reason) unfit.push(`${c.endpoint.provider}: ${reason}`);
    return !reason;
  });
  if (candidates.length === 0) {
    const reasons = [...resolved.excluded.map((e) => `${e.provider}: ${e.reason}`), ...ordered.dropped, ...unfit];
    // Endpoints that exist but cannot do what the body asks make the body the problem, not the model.
    if (unfit.length > 0) throw badRequest(`Invalid body: ${resolved.model} cannot serve this request: ${unfit.join("; ")}`);
    throw new HttpError("not_found", `No endpoints available for ${resolved.model}: ${reasons.join("; ") || "none configured"}`);
  }

  // The workspace's own keys go first where it brought one.
  const keyed = await withWorkspaceKeys(candidates, (provider) => deps.providerKey(caller.workspaceId, provider));
  const { signal, timedOut } = requestDeadline(res, deps.requestTimeoutMs);
  const generationId = newGenerationId();
  res.setHeader("X-Generation-Id", generationId);
  return {
    deps,
    caller,
    generationId,
    model: resolved.model,
    candidates: keyed,
    providers: options.providers,
    guardrailIds: resolved.guardrail_ids,
    filters: requestFilters(resolved.content_filters),
    findings: [],
    broadcast: resolved.broadcast,
    externalUser: options.user ?? null,
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

/**
 * Tries the endpoints in order, holding each attempt's worst case first. When none accepts, the hold is
 * released and the caller hears the most telling failure (402/403 from the hold, 429, 502, 524, 529).
 */
export async function firstAccepted<P, T>(
  run: MediaRun<P>,
  worstCase: (candidate: Candidate) => bigint,
  call: (provider: P, target: UpstreamTarget, candidate: Candidate, attempt: AttemptSignal) => Promise<T>,
): Promise<Served & { result: T }> {
  const { deps } = run;
  const context = { env: deps.env, cooldowns: deps.cooldowns, stats: deps.stats, logger: deps.logger, signal: run.signal, timeouts: deps.timeouts, operation: run.operation };
  const hold = { holds: deps.holds, generationId: run.generationId, keyHash: run.caller.keyHash, ttlMs: deps.holdTtlMs };
  return firstAcceptingHeld(run.providers, run.candidates, context, run.attempts, { hold, timedOut: run.timedOut }, worstCase, call);
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
  kind: MediaGeneration["kind"],
  candidate: Candidate,
  streamed: boolean,
): Omit<MediaGeneration, "usage" | "usageEstimated" | "charge" | "status"> => ({
  id: run.generationId,
  kind,
  keyHash: run.caller.keyHash,
  organizationId: run.caller.organizationId,
  workspaceId: run.caller.workspaceId,
  guardrailIds: run.guardrailIds,
  findings: run.findings,
  broadcast: run.broadcast,
  isByok: candidate.byokKey !== undefined,
  externalUser: run.externalUser,
  requestId: run.requestId,
  model: run.model,
  provider: candidate.endpoint.provider,
  streamed,
  latencyMs: Math.round(performance.now() - run.started),
  attempts: run.attempts,
  trace: run.trace,
});

/** What the gateway bills for a served generation: nothing when it ran on the workspace's own key (BYOK). */
export const billedUsd = (served: Served, charge: Charge): number => picoToUsd(served.candidate.byokKey ? 0n : charge.charged);
