import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { Logger } from "./log.js";

/**
 * The process's Prometheus metrics, one registry for every service the process runs (standalone runs
 * them all; the `service` label tells them apart). Served at `/metrics` by every service's app.
 */
export const registry = new Registry();
// The event-loop delay histogram samples with a timer; at prom-client's default of every 10 ms it woke each
// idle process 100 times a second (about 0.4% of a core per process, and a wake-up of a shared core for
// every service of a deployment). Every 100 ms still catches any stall that matters to a scrape.
const eventLoopSampleMs = 100;
collectDefaultMetrics({ register: registry, prefix: "switchyard_", eventLoopMonitoringPrecision: eventLoopSampleMs });

/** How each outbox in this process measures what it has not published yet; read when Prometheus scrapes. */
const outboxes = new Map<string, () => Promise<{ pending: number; lagSeconds: number }>>();

export function watchOutbox(schema: string, probe: () => Promise<{ pending: number; lagSeconds: number }>): () => void {
  outboxes.set(schema, probe);
  return () => outboxes.delete(schema);
}

async function collectOutboxes(gauge: "pending" | "lagSeconds", set: (schema: string, value: number) => void) {
  await Promise.all(
    [...outboxes].map(async ([schema, probe]) => {
      const figures = await probe().catch(() => undefined);
      if (figures) set(schema, figures[gauge]);
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
const holdProbes = new Set<() => Promise<HoldFigures>>();

/** Registers how this process reads the open holds (identity, which owns them); returns the unregistration. */
export function watchHolds(probe: () => Promise<HoldFigures>): () => void {
  holdProbes.add(probe);
  return () => holdProbes.delete(probe);
}

/** Sub-millisecond resolution at the bottom: a gateway hop costs well under a millisecond. */
const latencyBuckets = [0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

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
    help: "Calls to providers, by provider and outcome (accepted, or the error's status)",
    labelNames: ["service", "provider", "outcome"] as const,
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
    labelNames: ["outcome"] as const,
    registers: [registry],
  }),
  holdsOpen: new Gauge({
    name: "switchyard_spend_holds_open",
    help: "Spend holds not settled or released, by state: active, or expired (past their deadline, never settled: the leak signal). Every identity replica reports the same table",
    labelNames: ["state"] as const,
    registers: [registry],
    async collect() {
      for (const probe of holdProbes) {
        const figures = await probe().catch(() => undefined);
        if (!figures) continue;
        this.set({ state: "active" }, figures.active);
        this.set({ state: "expired" }, figures.expired);
      }
    },
  }),
  outboxPending: new Gauge({
    name: "switchyard_outbox_pending_events",
    help: "Events written to a service's outbox and not yet published",
    labelNames: ["schema"] as const,
    registers: [registry],
    async collect() {
      await collectOutboxes("pending", (schema, value) => this.set({ schema }, value));
    },
  }),
  outboxLag: new Gauge({
    name: "switchyard_outbox_lag_seconds",
    help: "Age of the oldest unpublished event of a service's outbox",
    labelNames: ["schema"] as const,
    registers: [registry],
    async collect() {
      await collectOutboxes("lagSeconds", (schema, value) => this.set({ schema }, value));
    },
  }),
  busConnected: new Gauge({
    name: "switchyard_bus_connected",
    help: "For a process given NATS_URL: 1 while it is connected to NATS, 0 while not (events wait in the outbox; consumers catch up when it connects)",
    registers: [registry],
  }),
  consumerPending: new Gauge({
    name: "switchyard_consumer_pending_messages",
    help: "Messages a durable consumer has yet to process: JetStream's num_pending + num_ack_pending, polled every few seconds",
    labelNames: ["consumer"] as const,
    registers: [registry],
  }),
  contentFilterMatches: new Counter({
    name: "switchyard_content_filter_matches_total",
    help: "Prompts a guardrail's content filter matched, by route, filter (a builtin's slug or pattern:<n>) and the action taken: block, redact or flag",
    labelNames: ["route", "filter", "action"] as const,
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
    labelNames: ["tool", "executed"] as const,
    registers: [registry],
  }),
};

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
