import { sessionId, sessionIdHeader } from "@switchyard/contracts";
import { badRequest, headerOf, noteRequest, picoToUsd, toPico } from "@switchyard/runtime";
import { createHash } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import { endAttemptSpan, type AttemptAnswer } from "./attempt-span.js";
import { servingModel, type Attempt } from "./attempts.js";
import type { Candidate } from "./candidates.js";

/** `GET /generation`'s `provider_responses`: each attempt's status, endpoint and time, inference's and media's alike. */
export const providerResponses = (attempts: readonly Attempt[]) =>
  attempts.map((a) => ({ status: a.status, provider_name: a.provider, model_permaslug: a.model, latency: a.latencyMs }));

/** Headers a generation keeps are cut to this length: they describe the caller, they are not its data. */
const headerChars = 1000;

/** A header's value as a record keeps it: its first non-empty name of `names`, cut to `headerChars`; else null. */
export function keptHeader(headers: IncomingHttpHeaders, ...names: string[]): string | null {
  for (const name of names) {
    const value = headers[name];
    if (typeof value === "string" && value) return value.slice(0, headerChars);
  }
  return null;
}

/** What a generation's completed event says of it whatever its kind: inference's and media's generations alike. */
export interface CompletedGeneration {
  id: string;
  keyHash: string;
  organizationId: string;
  workspaceId: string;
  guardrailIds: string[];
  model: string;
  provider: string | null;
  status: "completed" | "error" | "cancelled";
  streamed: boolean;
  usageEstimated: boolean;
  isByok: boolean;
  trace?: Record<string, unknown> | undefined;
  broadcast: boolean;
  attempts: readonly Attempt[];
  /**
   * The endpoint's own name for the model, where no attempt names it: a response cache hit called no provider,
   * and names the upstream model of the endpoint whose kept answer it replayed.
   */
  upstreamModel?: string | undefined;
}

/** The fields every completed event carries, which the ledger charges from: each service adds its figures. */
export const completedEventFields = (g: CompletedGeneration) => ({
  generation_id: g.id,
  key_hash: g.keyHash,
  organization_id: g.organizationId,
  workspace_id: g.workspaceId,
  guardrail_ids: g.guardrailIds,
  model: g.model,
  provider: g.provider,
  status: g.status,
  streamed: g.streamed,
  usage_estimated: g.usageEstimated,
  is_byok: g.isByok,
  ...(g.trace ? { trace: g.trace } : {}),
  broadcast: g.broadcast,
  upstream_model: servingModel(g.attempts, g.provider) ?? g.upstreamModel ?? null,
});

/** The `x-session-id` header, held to the limit of a body's `session_id`: a 400 naming the header past it. */
export function sessionHeader(headers: IncomingHttpHeaders): string | undefined {
  const value = headerOf(headers, sessionIdHeader);
  // Most requests send none; zod's failure for a missing value builds an issue list (4 µs a request).
  if (value === undefined) return undefined;
  const checked = sessionId.safeParse(value);
  if (!checked.success) throw badRequest(`Invalid header: ${sessionIdHeader}: ${checked.error.issues[0]?.message ?? "invalid"}`);
  return value;
}

/** The app that asked, as every generation records it: its URL, its name and its client. */
export const appOf = (headers: IncomingHttpHeaders) => ({
  httpReferer: keptHeader(headers, "http-referer", "referer"),
  appTitle: keptHeader(headers, "x-title", "x-openrouter-title"),
  userAgent: keptHeader(headers, "user-agent"),
});

/** An app is known by its URL (`HTTP-Referer`): the same URL is the same app, a stable number without a registry. */
export const appId = (referer: string | null): number | null => (referer ? createHash("sha256").update(referer).digest().readUIntBE(0, 6) : null);

/** The origin of the app's URL (`GET /generation`'s `origin`), empty when it has none. */
export function originOf(referer: string | null): string {
  if (!referer) return "";
  try {
    return new URL(referer).origin;
  } catch {
    return "";
  }
}

/** The most a recorded count may be: generation and ledger rows keep tokens as 32-bit integers. */
export const countCeiling = 2 ** 31 - 1;

/**
 * A provider's count as records keep it: a whole number from 0 to `countCeiling`. A figure beyond it is no
 * usage a request can have (its charge is capped at the hold); written as it came, it would fail the batch
 * of records it shares a statement with, and every charge in it.
 */
export const storedCount = (n: number): number => (Number.isNaN(n) ? 0 : Math.min(Math.max(Math.ceil(n), 0), countCeiling));

/**
 * The request's log line names the generation it made: its id, the endpoint that served, its tokens and
 * charge; the span of the attempt that served it ends with them.
 */
export function noteGeneration(id: string, candidate: Candidate, usage: { promptTokens: number; completionTokens?: number }, charged: bigint, answer?: AttemptAnswer): void {
  noteRequest({
    generationId: id,
    model: candidate.model,
    provider: candidate.endpoint.provider,
    promptTokens: usage.promptTokens,
    completionTokens: usage.completionTokens ?? 0,
    cost: picoToUsd(charged),
  });
  endAttemptSpan(id, usage, answer);
}

/** A signed USD decimal string (a numeric column as text) as a number of dollars. */
const signedUsd = (decimal: string): number => (decimal.startsWith("-") ? -picoToUsd(toPico(decimal.slice(1))) : picoToUsd(toPico(decimal)));

/**
 * What `GET /generation` says a generation cost, inference's and media's alike: `usage` and `total_cost`
 * are what the gateway billed (none of a BYOK generation, whose cost went to the workspace's own key);
 * `upstream_inference_cost` is the reported usage at the endpoint's prices, above `total_cost` when the
 * charge was capped at the hold. `cache_discount` is what prompt caching saved (`cacheDiscountUsd`, null where
 * nothing was read from or written to a provider's cache). Searches and fetches are not tracked.
 */
export function generationCost(costUsd: string, upstreamCostUsd: string | null, isByok: boolean, cacheDiscountUsd: string | null = null) {
  const charged = picoToUsd(toPico(costUsd));
  const cost = isByok ? 0 : charged;
  return {
    num_search_results: null,
    num_fetches: null,
    web_search_engine: null,
    usage: cost,
    total_cost: cost,
    cache_discount: cacheDiscountUsd === null ? null : signedUsd(cacheDiscountUsd),
    upstream_inference_cost: upstreamCostUsd === null ? charged : picoToUsd(toPico(upstreamCostUsd)),
  };
}
