import type { Express } from "express";
import type { Bus } from "../bus/types.js";
import { registry } from "../metrics.js";
import { within } from "../within.js";
import { defaultRetryAfterSeconds } from "./errors.js";

/** A dependency that is away while the process still serves without it: reported, not failing readiness. */
export interface Degraded {
  degraded: string;
}

/** Throws when the process cannot work without the dependency; returns `Degraded` when it can. */
export type ReadinessCheck = () => Promise<void | Degraded> | void | Degraded;

/**
 * NATS as a readiness check that never fails it: every service serves with NATS away (events wait in its
 * outbox, consumers catch up when it answers), so a NATS outage must not take every replica out of its
 * balancer. None for the in-process bus.
 */
export function busReadiness(bus: Bus): Record<string, ReadinessCheck> {
  if (bus.kind !== "nats") return {};
  return { nats: () => (bus.healthy() ? undefined : { degraded: "NATS unreachable: events wait in the outbox, consumers catch up when it answers" }) };
}

export interface HealthState {
  draining: boolean;
}

/**
 * `/healthz` answers while the process lives; `/readyz` only when every dependency it cannot work without
 * answers and the process is not draining, so a load balancer stops sending new work before shutdown. A
 * dependency it can do without, when away, makes the status "degraded" (still 200).
 */
export function mountHealth(app: Express, checks: Record<string, ReadinessCheck>, state: HealthState): void {
  app.get("/healthz", (_req, res) => {
    res.json({ status: "ok" });
  });
  // Prometheus scrapes every process here (for the router, keep it off the public ingress).
  app.get("/metrics", async (_req, res) => {
    res.type(registry.contentType).send(await registry.metrics());
  });
  app.get("/readyz", async (_req, res) => {
    // Draining is not ready whatever the dependencies say: answered at once, without waiting on a check (a
    // database ping behind a busy pool), so balancers stop sending connections within one probe.
    if (state.draining) return void res.status(503).set("Retry-After", String(defaultRetryAfterSeconds)).json({ status: "draining", checks: {} });
    const results: Record<string, string> = {};
    let ready = true;
    let degraded = false;
    for (const [name, check] of Object.entries(checks)) {
      try {
        const outcome = await within(Promise.resolve(check()), 2000);
        results[name] = outcome ? `degraded: ${outcome.degraded}` : "ok";
        degraded ||= outcome !== undefined;
      } catch (error) {
        ready = false;
        results[name] = error instanceof Error ? error.message : "failed";
      }
    }
    if (!ready) res.set("Retry-After", String(defaultRetryAfterSeconds));
    res.status(ready ? 200 : 503).json({ status: ready ? (degraded ? "degraded" : "ready") : "not ready", checks: results });
  });
}

