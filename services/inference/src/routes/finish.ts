import { account, metadataBody, type Accounted } from "../responses.js";
import type { UpstreamUsage } from "../providers/types.js";
import { capCharge, findingsRecord, type Candidate } from "@switchyard/upstream";
import { keepContent } from "../generations/content.js";
import { abandoned, type ChatContext } from "./chat-completions.js";

export interface Outcome {
  candidate: Candidate;
  status: "completed" | "error" | "cancelled";
  usage: UpstreamUsage | undefined;
  completionText: string;
  /** The reasoning the answer carried, for input/output logging. */
  reasoningText?: string;
  upstreamId: string | null;
  finishReason: string | null;
  nativeFinishReason: string | null;
  serviceTier: string | null;
  firstTokenMs: number | null;
}

/**
 * Prices the outcome with the one cost function, caps the charge at the worst case held for it, and queues
 * its record and event (committed together a few milliseconds later, in a batch); returns the figures for
 * the answer. Every chat route (buffered, streamed, each turn of the agent loop) settles here.
 */
export function finish(context: ChatContext, outcome: Outcome): Accounted {
  const { candidate } = outcome;
  const priced = account(candidate, outcome.usage, () => JSON.stringify(context.body.messages), outcome.completionText);
  const charge = capCharge({
    logger: context.deps.logger,
    generationId: context.generationId,
    provider: candidate.endpoint.provider,
    model: candidate.model,
    held: context.held.get(candidate),
    reported: priced.cost.total,
    beyondHold: context.deps.chargeBeyondHold,
    usage: priced.usage,
  });
  keepContent(context, outcome);
  const isByok = candidate.byokKey !== undefined;
  const accounted = { ...priced, charge, isByok, billed: isByok ? 0n : charge.charged };
  context.deps.recorder.record({
    id: context.generationId,
    keyHash: context.caller.keyHash,
    organizationId: context.caller.organizationId,
    workspaceId: context.caller.workspaceId,
    guardrailIds: context.guardrailIds,
    contentFilters: findingsRecord(context.findings),
    presetId: context.presetId,
    isByok,
    attribution: context.attribution,
    broadcast: context.broadcast,
    requestId: context.requestId,
    sessionId: context.sessionId ?? null,
    trace: context.request.trace,
    model: outcome.candidate.model,
    requestedModel: context.requested,
    provider: outcome.candidate.endpoint.provider,
    upstreamId: outcome.upstreamId,
    status: outcome.status,
    streamed: context.request.stream === true,
    finishReason: outcome.finishReason,
    nativeFinishReason: outcome.nativeFinishReason,
    promptTokens: accounted.usage.promptTokens,
    completionTokens: accounted.usage.completionTokens,
    reasoningTokens: accounted.usage.reasoningTokens,
    cachedTokens: accounted.usage.cachedTokens,
    usageEstimated: accounted.estimated,
    charge,
    latencyMs: outcome.firstTokenMs,
    generationTimeMs: Math.round(performance.now() - context.started),
    serviceTier: outcome.serviceTier,
    dataRegion: outcome.candidate.endpoint.region,
    attempts: context.attempts,
  });
  return accounted;
}

export function metadataFor(context: ChatContext, candidate: Candidate) {
  if (!context.wantsMetadata) return {};
  return {
    openrouter_metadata: metadataBody({
      requested: context.requested,
      candidates: context.candidates,
      selected: candidate,
      attempt: context.attempts.length,
      generationTimeMs: Math.round(performance.now() - context.started),
      region: candidate.endpoint.region,
      dropped: context.dropped.get(candidate) ?? [],
      contentFilters: findingsRecord(context.findings),
    }),
  };
}

/** A client that hung up mid-request still used the prompt the provider was reading: it is accounted. */
export function accountAbandoned(context: ChatContext): void {
  if (!abandoned(context)) return;
  finish(context, {
    candidate: context.inFlight!,
    status: "cancelled",
    usage: undefined,
    completionText: "",
    upstreamId: null,
    finishReason: null,
    nativeFinishReason: null,
    serviceTier: null,
    firstTokenMs: null,
  });
}
