import { randomUUID } from "node:crypto";
import type { EventSubject, ResolvedEndpoint } from "@switchyard/contracts";
import type { Bus, Logger } from "@switchyard/runtime";
import type { UpstreamTimeouts } from "./attempt-timeouts.js";

/** What one replica tells the others: an endpoint rests for `rest_ms`, or (null) it answered again. */
export interface EndpointChange {
  provider: string;
  upstream_model: string;
  rest_ms: number | null;
}

export interface EndpointHealthOptions {
  /** How long an endpoint rests after a failure without a Retry-After. */
  cooldownMs: number;
  /** How long one request's probe keeps the endpoint behind for the others: the first-byte timeout. */
  probeWindowMs: number;
  now?: () => number;
  /** Told of each change this process makes, to share it. */
  share?: (change: EndpointChange) => void;
}

/** A Retry-After is honoured up to this; a provider asking for more is tried again sooner. */
const longestRestMs = 300_000;

const keyOf = (provider: string, upstreamModel: string) => `${provider}/${upstreamModel}`;

/**
 * Which endpoints failed recently. One that failed (a 429, a 5xx, no connection, a timeout) rests: it goes
 * behind healthy endpoints until its Retry-After or the cool-down has passed. Then the first request that
 * tries it is its probe, and other requests keep it behind until the probe answers (or its window passes):
 * a success lets it back in its usual place, a failure rests it again.
 */
export function createEndpointHealth(options: EndpointHealthOptions) {
  const now = options.now ?? Date.now;
  const states = new Map<string, { until: number; probeUntil: number }>();
  const rest = (key: string, ms: number) => states.set(key, { until: now() + Math.min(ms, longestRestMs), probeUntil: 0 });
  return {
    /** Whether the endpoint goes behind healthy ones: it rests, or another request is probing it. */
    coolingDown(endpoint: ResolvedEndpoint): boolean {
      const state = states.get(keyOf(endpoint.provider, endpoint.upstream_model));
      if (!state) return false;
      const t = now();
      return state.until > t || state.probeUntil > t;
    },
    /** An attempt is about to call the endpoint: once its rest has passed, that attempt is the probe. */
    attempting(endpoint: ResolvedEndpoint): void {
      const state = states.get(keyOf(endpoint.provider, endpoint.upstream_model));
      const t = now();
      if (state && state.until <= t && state.probeUntil <= t) state.probeUntil = t + options.probeWindowMs;
    },
    failed(endpoint: ResolvedEndpoint, restMs = options.cooldownMs): void {
      const key = keyOf(endpoint.provider, endpoint.upstream_model);
      const resting = (states.get(key)?.until ?? 0) > now();
      rest(key, restMs);
      // Already resting: the others know; a busy endpoint's failures are not broadcast one by one.
      if (!resting) options.share?.({ provider: endpoint.provider, upstream_model: endpoint.upstream_model, rest_ms: Math.min(restMs, longestRestMs) });
    },
    succeeded(endpoint: ResolvedEndpoint): void {
      if (!states.delete(keyOf(endpoint.provider, endpoint.upstream_model))) return;
      options.share?.({ provider: endpoint.provider, upstream_model: endpoint.upstream_model, rest_ms: null });
    },
    /** A change another replica made. */
    apply(change: EndpointChange): void {
      const key = keyOf(change.provider, change.upstream_model);
      if (change.rest_ms === null) states.delete(key);
      else rest(key, change.rest_ms);
    },
  };
}
export type EndpointHealth = ReturnType<typeof createEndpointHealth>;

export interface SharedHealthOptions {
  bus: Bus;
  timeouts: UpstreamTimeouts;
  now?: () => number;
  /** This service's subject, e.g. `inference.endpoint.health.v1`. */
  subject: Extract<EventSubject, `${string}.endpoint.health.v1`>;
  logger: Logger;
}

/**
 * Endpoint health shared by every replica of a service over the bus: a replica that sees an endpoint fail
 * (or answer again) tells the others, which order it the same way from then on. It is a hint, not a record:
 * a replica that misses a change (NATS down, just started) learns by failing once itself, so while the bus
 * is unreachable each replica keeps its own view and nothing waits on the bus.
 */
export async function startSharedHealth(options: SharedHealthOptions): Promise<EndpointHealth & { stop(): Promise<void> }> {
  const { bus, subject, logger } = options;
  const origin = randomUUID();
  const health = createEndpointHealth({
    cooldownMs: options.timeouts.failureCooldownMs,
    probeWindowMs: options.timeouts.firstByteMs,
    ...(options.now ? { now: options.now } : {}),
    share(change) {
      if (change.rest_ms === null) logger.info({ provider: change.provider, model: change.upstream_model }, "endpoint answered again");
      else logger.warn({ provider: change.provider, model: change.upstream_model, restMs: change.rest_ms }, "endpoint failed; it goes behind healthy ones while it rests");
      if (!bus.healthy()) return;
      bus.publish({ id: randomUUID(), subject, occurred_at: new Date().toISOString(), data: { ...change, origin } }).catch((err: unknown) =>
        logger.warn({ err, provider: change.provider }, "could not share an endpoint's health with other replicas"),
      );
    },
  });
  const subscription = await bus.listen([subject], async (event) => {
    const data = event.data as EndpointChange & { origin: string };
    if (data.origin === origin) return;
    logger.debug({ provider: data.provider, model: data.upstream_model, restMs: data.rest_ms }, "endpoint health shared by another replica");
    health.apply(data);
  });
  return { ...health, stop: () => subscription.stop() };
}
