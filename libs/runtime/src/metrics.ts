import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { Logger } from "./log.js";

/**
 * The process's Prometheus metrics, one registry for every service the process runs (standalone runs
 * them all; the `service` label tells them apart). Served at `/metrics` by every service's app.
 */
export const registry = new Registry();
// The event-loop delay histogram samples with a timer; at prom-client's default of every 10 ms it woke each
// idle process 100 times a second (about 0.4% of a core per process, and a wake-up of a shared core for
// every service of a deployment). Every 100 ms still catches each stall that matters to a scrape.
const eventLoopSampleMs = 100;
collectDefaultMetrics({ register: registry, prefix: "switchyard_", eventLoopMonitoringPrecision: eventLoopSampleMs });

interface OutboxProbe {
  service: string;
  probe: () => Promise<{ pending: number; lagSeconds: number }>;
}
/** How each outbox in this process measures what it has not published yet; read when Prometheus scrapes. */
const outboxes = new Map<string, OutboxProbe>();

/** Registers how the outbox of `schema`, kept by `service`, measures its backlog; returns the unregistration. */
export function watchOutbox(service: string, schema: string, probe: OutboxProbe["probe"]): () => void {
  outboxes.set(schema, { service, probe });
  return () => outboxes.delete(schema);
}

async function collectOutboxes(gauge: "pending" | "lagSeconds", set: (labels: { service: string; schema: string }, value: number) => void) {
  await Promise.all(
    [...outboxes].map(async ([schema, { service, probe }]) => {
      const figures = await probe().catch(() => undefined);
      if (figures) set({ service, schema }, figures[gauge]);
    }),
  );
}

/** Spend holds not settled or released yet, by state; read from the table that keeps them when Prometheus scrapes. */
export interface HoldFigures {
  /** Within their deadline: requests under way. */
  active: number;
  /** Past their deadline and never settled: generations that were not recorded (a replica died, an event was lost). */
  expired: number;
}
const holdProbes = new Map<() => Promise<HoldFigures>, string>();

/** Registers how `service` (identity, which owns the holds) reads the open ones; returns the unregistration. */
export function watchHolds(service: string, probe: () => Promise<HoldFigures>): () => void {
  holdProbes.set(probe, service);
  return () => holdProbes.delete(probe);
}

/** Sub-millisecond resolution at the bottom: a gateway hop costs well under a millisecond. */
const latencyBuckets = [0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
/**
 * Model calls: an embedding answers in tens of milliseconds, a first token in a few hundred, a long answer or
 * an image in tens of seconds. Finest where first tokens fall, so their percentiles are worth reading.
 */
const generationBuckets = [0.05, 0.1, 0.25, 0.5, 0.75, 1, 1.5, 2, 3, 5, 8, 13, 20, 30, 60, 120];
/**
 * Every generation series is per endpoint (provider and model, the catalog's id: bounded by the operator's
 * catalog, never by what callers send) and per operation.
 */
const generationLabels = ["service", "operation", "provider", "model"] as const;

export const metrics = {
  httpRequests: new Counter({
    name: "switchyard_http_requests_total",
    help: "HTTP requests answered, by service, method, route and status",
    labelNames: ["service", "method", "route", "status"] as const,
    registers: [registry],
  }),
  httpDuration: new Histogram({
    name: "switchyard_http_request_duration_seconds",
    help: "Time from a request's arrival to the end of its answer (streams included)",
    labelNames: ["service", "method", "route"] as const,
    buckets: latencyBuckets,
    registers: [registry],
  }),
  upstreamAttempts: new Counter({
    name: "switchyard_upstream_attempts_total",
    help: "Calls to providers, by provider, model (the catalog's id) and outcome: accepted, or the error's status (timeout, unreachable, or the provider's HTTP status)",
    labelNames: ["service", "provider", "model", "outcome"] as const,
    registers: [registry],
  }),
  streamDuration: new Histogram({
    name: "switchyard_stream_duration_seconds",
    help: "How long streamed answers took, first attempt to last byte",
    labelNames: ["service", "status"] as const,
    buckets: latencyBuckets,
    registers: [registry],
  }),
  holds: new Counter({
    name: "switchyard_spend_holds_total",
    help: "Spend holds in identity, by outcome: granted, refused, released (nothing to charge), settled (charged), expired (removed unsettled after their deadline), reaped (freed when the replica that owned them stopped renewing their lease or started again)",
    labelNames: ["service", "outcome"] as const,
    registers: [registry],
  }),
  holdsOpen: new Gauge({
    name: "switchyard_spend_holds_open",
    help: "Spend holds not settled or released, by state: active, or expired (past their deadline, never settled: the leak signal). Every identity replica reports the same table",
    labelNames: ["service", "state"] as const,
    registers: [registry],
    async collect() {
      for (const [probe, service] of holdProbes) {
        const figures = await probe().catch(() => undefined);
        if (!figures) continue;
        this.set({ service, state: "active" }, figures.active);
        this.set({ service, state: "expired" }, figures.expired);
      }
    },
  }),
  outboxPending: new Gauge({
    name: "switchyard_outbox_pending_events",
    help: "Events written to a service's outbox and not yet published",
    labelNames: ["service", "schema"] as const,
    registers: [registry],
    async collect() {
      await collectOutboxes("pending", (labels, value) => this.set(labels, value));
    },
  }),
  outboxLag: new Gauge({
    name: "switchyard_outbox_lag_seconds",
    help: "Age of the oldest unpublished event of a service's outbox",
    labelNames: ["service", "schema"] as const,
    registers: [registry],
    async collect() {
      await collectOutboxes("lagSeconds", (labels, value) => this.set(labels, value));
    },
  }),
  busConnected: new Gauge({
    name: "switchyard_bus_connected",
    help: "For a process given NATS_URL: 1 while it is connected to NATS, 0 while not (events wait in the outbox; consumers catch up when it connects)",
    labelNames: ["service"] as const,
    registers: [registry],
  }),
  consumerPending: new Gauge({
    name: "switchyard_consumer_pending_messages",
    help: "Messages a durable consumer has yet to process: JetStream's num_pending + num_ack_pending, polled every few seconds",
    labelNames: ["service", "consumer"] as const,
    registers: [registry],
  }),
  contentFilterMatches: new Counter({
    name: "switchyard_content_filter_matches_total",
    help: "Prompts a guardrail's content filter matched, by route, filter (a builtin's slug or pattern:<n>) and the action taken: block, redact or flag",
    labelNames: ["service", "route", "filter", "action"] as const,
    registers: [registry],
  }),
  spendOverruns: new Counter({
    name: "switchyard_spend_overruns_total",
    help: "Generations whose provider reported usage costing more than the worst case held for them, by provider, model and what was charged: held (capped at the hold) or reported (SPEND_CHARGE_BEYOND_HOLD)",
    labelNames: ["service", "provider", "model", "charged"] as const,
    registers: [registry],
  }),
  spendOverrunUsd: new Counter({
    name: "switchyard_spend_overrun_usd_total",
    help: "Both figures of those generations, summed in USD: figure=held, the worst case held; figure=reported, the reported usage at the endpoint's prices",
    labelNames: ["service", "provider", "model", "figure"] as const,
    registers: [registry],
  }),
  serverToolCalls: new Counter({
    name: "switchyard_server_tool_calls_total",
    help: "Server tool calls the agent loop ran, by tool and whether they produced a result",
    labelNames: ["service", "tool", "executed"] as const,
    registers: [registry],
  }),
  responseCache: new Counter({
    name: "switchyard_response_cache_requests_total",
    help: "Requests that asked for the response cache (X-OpenRouter-Cache: true), by endpoint and what the cache answered: HIT, MISS or BYPASS",
    labelNames: ["service", "endpoint", "status"] as const,
    registers: [registry],
  }),
  generations: new Counter({
    name: "switchyard_generations_total",
    help: "Generations recorded (every one that reached a provider, or was cancelled holding one), by endpoint, operation and status: completed, error (failed after its first byte) or cancelled",
    labelNames: [...generationLabels, "status"] as const,
    registers: [registry],
  }),
  generationRecordsDropped: new Counter({
    name: "switchyard_generation_records_dropped_total",
    help: "Generation records a service could not write however often it tried (a row its table or event refuses), logged at error with the generation's id and figures; their holds expire unsettled",
    labelNames: ["service"] as const,
    registers: [registry],
  }),
  generationDuration: new Histogram({
    name: "switchyard_generation_duration_seconds",
    help: "End-to-end time of completed generations, from the gateway taking them up to their last byte",
    labelNames: generationLabels,
    buckets: generationBuckets,
    registers: [registry],
  }),
  generationFirstToken: new Histogram({
    name: "switchyard_generation_time_to_first_token_seconds",
    help: "Time to the first output of completed streamed generations: a chat stream's first token, speech's first audio, an image stream's first image",
    labelNames: generationLabels,
    buckets: generationBuckets,
    registers: [registry],
  }),
  generationTokens: new Counter({
    name: "switchyard_generation_tokens_total",
    help: "Tokens of recorded generations as reported (or estimated when not), by kind: prompt, completion, cached (part of prompt) and reasoning (part of completion)",
    labelNames: [...generationLabels, "kind"] as const,
    registers: [registry],
  }),
  generationCost: new Counter({
    name: "switchyard_generation_cost_usd_total",
    help: "What recorded generations were charged, in USD at the catalog's prices (capped at their holds); byok=true was charged to a workspace's own provider key, not billed by the gateway",
    labelNames: [...generationLabels, "byok"] as const,
    registers: [registry],
  }),
  traceSpansDropped: new Counter({
    name: "switchyard_trace_spans_dropped_total",
    help: "Spans never exported, by process: queue_full when the export queue was full, export_failed when the collector refused or could not be reached",
    labelNames: ["service", "reason"] as const,
    registers: [registry],
  }),
  traceSpansExported: new Counter({
    name: "switchyard_trace_spans_exported_total",
    help: "Spans the OTLP collector accepted, by process",
    labelNames: ["service"] as const,
    registers: [registry],
  }),
};

/** The operations a generation can be, as traces name them (`gen_ai.operation.name`). */
export type GenerationOperation = "chat" | "embeddings" | "rerank" | "transcription" | "image_generation" | "speech";

/** One recorded generation's figures, as its service records it. */
export interface GenerationFigures {
  service: string;
  operation: GenerationOperation;
  provider: string;
  /** The catalog's model id (never the caller's string: that would make the label unbounded). */
  model: string;
  status: "completed" | "error" | "cancelled";
  /** End to end. */
  seconds: number;
  /** To the first output of a stream; null when buffered or nothing came. */
  firstOutputSeconds: number | null;
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  reasoningTokens: number;
  /** What it was charged. */
  costUsd: number;
  byok: boolean;
}

/** Counters refuse negative and infinite steps; a figure that is neither is skipped, never thrown for. */
const counts = (value: number): boolean => value > 0 && Number.isFinite(value);

/**
 * A generation's series with the label each counter adds, written out: spreading the four labels into a new
 * object for each counter cost more than the counting itself.
 */
function addTokens(g: GenerationFigures, kind: "prompt" | "completion" | "cached" | "reasoning", value: number): void {
  if (counts(value)) metrics.generationTokens.inc({ service: g.service, operation: g.operation, provider: g.provider, model: g.model, kind }, value);
}

/**
 * Counts one generation where its record is made (once, whatever retries writing it takes). Latencies are
 * of completed generations only: a cancelled or failed one's time says how long it lasted, not how fast
 * its endpoint answers. Tokens and cost are counted whatever the status, as they are charged.
 */
export function observeGeneration(g: GenerationFigures): void {
  const { service, operation, provider, model } = g;
  metrics.generations.inc({ service, operation, provider, model, status: g.status });
  if (g.status === "completed") {
    const labels = { service, operation, provider, model };
    metrics.generationDuration.observe(labels, g.seconds);
    if (g.firstOutputSeconds !== null) metrics.generationFirstToken.observe(labels, g.firstOutputSeconds);
  }
  addTokens(g, "prompt", g.promptTokens);
  addTokens(g, "completion", g.completionTokens);
  addTokens(g, "cached", g.cachedTokens);
  addTokens(g, "reasoning", g.reasoningTokens);
  if (counts(g.costUsd)) metrics.generationCost.inc({ service, operation, provider, model, byok: String(g.byok) }, g.costUsd);
}

const services = new WeakMap<Logger, string>();

/** The service a logger speaks for (its `service` binding), the label of its metrics; read once per logger. */
export function serviceOf(logger: Logger): string {
  let service = services.get(logger);
  if (service === undefined) {
    service = String((logger.bindings() as { service?: unknown }).service ?? "switchyard");
    services.set(logger, service);
  }
  return service;
}
