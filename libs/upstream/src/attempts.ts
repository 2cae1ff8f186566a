import type { ResolvedEndpoint } from "@switchyard/contracts";
import { metrics, serviceOf, type GenerationOperation, type Logger } from "@switchyard/runtime";
import { tracedAttempts } from "./attempt-span.js";
import type { Candidate } from "./candidates.js";
import { attemptSignal, FirstByteTimeout, type AttemptSignal, type UpstreamTimeouts } from "./attempt-timeouts.js";
import type { EndpointHealth } from "./endpoint-health.js";
import type { EndpointStats } from "./endpoint-stats/stats.js";
import { UpstreamError, WorkspaceKeyRefused, withoutKey } from "./errors.js";

/** Where and how to call one upstream endpoint. */
export interface UpstreamTarget {
  provider: string;
  baseUrl: string;
  apiKey: string | undefined;
  upstreamModel: string;
  /** The endpoint's output limit, for wire formats that require one on every request. */
  maxCompletionTokens: number | null;
  /** The provider passes signed and encrypted reasoning on to the providers behind it (OpenRouter). */
  relaysReasoning?: boolean;
  /** Headers of the client's that a dialect's own wire carries on (Anthropic's `anthropic-beta`). */
  headers?: Readonly<Record<string, string>>;
  /** Told the JSON body an adapter posts, as it posts it (`debug.echo_upstream_body`); unset otherwise. */
  sent?: (body: Record<string, unknown>) => void;
}

/** The JSON body an adapter posts to `target`, after telling the target's `sent`. */
export function posted<T extends Record<string, unknown>>(target: UpstreamTarget, body: T): T {
  target.sent?.(body);
  return body;
}

/** One try of one endpoint, as a generation record keeps it. */
export interface Attempt {
  provider: string;
  model: string;
  /** The endpoint's own name for the model (absent from records written before it was kept). */
  upstreamModel?: string;
  /** Made with the workspace's own key. */
  byok?: boolean;
  status: number | null;
  latencyMs: number;
  error?: string;
}

/** The upstream model of the endpoint that served: the last attempt at the provider that answered; null when none did. */
export const servingModel = (attempts: readonly Attempt[], provider: string | null): string | null =>
  provider === null ? null : (attempts.findLast((a) => a.provider === provider)?.upstreamModel ?? null);

export interface AttemptContext {
  env: Record<string, string | undefined>;
  /** Endpoints that failed recently, shared by every request (and, over the bus, every replica). */
  cooldowns: EndpointHealth;
  /** Live endpoint statistics, told of each attempt's outcome (uptime); none in tests that do without. */
  stats?: Pick<EndpointStats, "attempted"> | undefined;
  logger: Logger;
  signal: AbortSignal;
  timeouts: UpstreamTimeouts;
  /** What the attempts do, as their trace spans name it; chat unless said. */
  operation?: GenerationOperation;
}

export function targetOf(endpoint: ResolvedEndpoint, env: Record<string, string | undefined>, byokKey?: string): UpstreamTarget {
  const apiKey = byokKey ?? endpoint.api_key_env.map((name) => env[name]).find((value) => value);
  return {
    provider: endpoint.provider,
    baseUrl: endpoint.base_url,
    apiKey,
    upstreamModel: endpoint.upstream_model,
    maxCompletionTokens: endpoint.max_completion_tokens,
    ...(endpoint.relays_reasoning ? { relaysReasoning: true } : {}),
  };
}

/**
 * An attempt's record: the endpoint it went to, whether on the workspace's own key (`keyed`), and how it went.
 * One literal, its optional fields spread after the others (see `extended` for why not before).
 */
const attemptOf = (candidate: Candidate, outcome: Pick<Attempt, "status" | "latencyMs" | "error">, keyed = Boolean(candidate.byokKey)): Attempt => ({
  provider: candidate.endpoint.provider,
  model: candidate.model,
  upstreamModel: candidate.endpoint.upstream_model,
  ...(keyed ? { byok: true } : {}),
  ...outcome,
});

/** A workspace key the provider refused is named as such (never shown), so its owner knows which key to fix. */
function workspaceKeyFailure(error: UpstreamError, provider: string): UpstreamError {
  if (error.status !== 401 && error.status !== 403) return error;
  return new WorkspaceKeyRefused(`The workspace's own ${provider} key was refused (${error.status}): check or replace it`, error.status, false);
}

/**
 * Tries candidates in order until one accepts the request. Failures before the first byte that another
 * endpoint might not have (timeouts, 429, 5xx, connection errors) move on to the next endpoint; every other
 * failure moves on to the next model of the request's `models` list. `providers` maps the catalog's
 * adapter names to this service's implementations; an endpoint without one is skipped.
 *
 * Each attempt has its own signal (passed to `call`, for the provider call and, once accepted, its stream):
 * it follows the request's, and aborts when the attempt has not been accepted within the first-byte
 * timeout. An endpoint that failed in a way another might not (timed out, 429, 5xx, unreachable) rests
 * behind healthy ones (for its Retry-After, else the cool-down), so the next requests do not queue behind
 * it; one that answers is healthy again.
 */
export async function firstAccepting<P, T>(
  providers: Readonly<Record<string, P>>,
  candidates: readonly Candidate[],
  context: AttemptContext,
  attempts: Attempt[],
  call: (provider: P, target: UpstreamTarget, candidate: Candidate, attempt: AttemptSignal) => Promise<T>,
): Promise<{ result: T; candidate: Candidate }> {
  let last: UpstreamError | undefined;
  let refusedModel: string | undefined;
  const send = tracedAttempts(call, context.operation);
  for (const candidate of candidates) {
    if (context.signal.aborted) break;
    // A refusal another endpoint of the same model would repeat skips to the next model of `models`.
    if (candidate.model === refusedModel) continue;
    const provider = providers[candidate.endpoint.adapter];
    if (!provider) {
      attempts.push(attemptOf(candidate, { status: null, latencyMs: 0, error: `no ${candidate.endpoint.adapter} adapter` }, false));
      continue;
    }
    const started = performance.now();
    const target = targetOf(candidate.endpoint, context.env, candidate.byokKey);
    const attempt = attemptSignal(context.signal);
    const { firstByteMs } = context.timeouts;
    const firstByte = setTimeout(() => attempt.abort(new FirstByteTimeout(candidate.endpoint.provider, firstByteMs)), firstByteMs);
    try {
      let result: T;
      // A workspace's own key says nothing of the endpoint for everyone else: it neither probes a resting
      // endpoint nor ends a rest the operator's key earned.
      if (!candidate.byokKey) context.cooldowns.attempting(candidate.endpoint);
      try {
        result = await send(provider, target, candidate, attempt);
      } catch (error) {
        attempt.detach();
        // Whatever the provider call threw once the timer aborted it, the cause is the timeout.
        throw attempt.timedOut() ? attempt.signal.reason : error;
      } finally {
        clearTimeout(firstByte);
      }
      attempts.push(attemptOf(candidate, { status: 200, latencyMs: Math.round(performance.now() - started) }));
      metrics.upstreamAttempts.inc({ service: serviceOf(context.logger), provider: candidate.endpoint.provider, model: candidate.model, outcome: "accepted" });
      if (!candidate.byokKey) {
        context.cooldowns.succeeded(candidate.endpoint);
        context.stats?.attempted(candidate.endpoint.provider, candidate.model, true);
      }
      return { result, candidate };
    } catch (thrown) {
      if (!(thrown instanceof UpstreamError)) throw thrown;
      withoutKey(thrown, target.apiKey);
      const error = candidate.byokKey ? workspaceKeyFailure(thrown, candidate.endpoint.provider) : thrown;
      attempts.push(attemptOf(candidate, { status: error.status, latencyMs: Math.round(performance.now() - started), error: error.message }));
      metrics.upstreamAttempts.inc({ service: serviceOf(context.logger), provider: candidate.endpoint.provider, model: candidate.model, outcome: error instanceof FirstByteTimeout ? "timeout" : error.status === null ? "unreachable" : String(error.status) });
      // A workspace's own key failing says nothing of the endpoint for everyone else, nor of the operator's key.
      if (error.retryable && !candidate.byokKey) context.cooldowns.failed(candidate.endpoint, error.retryAfterMs ?? context.timeouts.failureCooldownMs);
      // Uptime, as OpenRouter counts it: a provider-side failure counts against it; a rate limit does not.
      if (error.retryable && error.status !== 429 && !candidate.byokKey) context.stats?.attempted(candidate.endpoint.provider, candidate.model, false);
      context.logger.warn({ provider: candidate.endpoint.provider, byok: candidate.byokKey !== undefined, status: error.status, err: error.message }, "upstream attempt failed");
      last = error;
      if (!error.retryable && !candidate.byokKey) refusedModel = candidate.model;
    }
  }
  throw last ?? new UpstreamError("no endpoint could be tried", null, false);
}
