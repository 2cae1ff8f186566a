import type { Express } from "express";
import { registry } from "../metrics.js";
import { defaultRetryAfterSeconds } from "./errors.js";

export type ReadinessCheck = () => Promise<void> | void;

export interface HealthState {
  draining: boolean;
}

/**
 * `/healthz` answers while the process lives; `/readyz` only when every dependency answers and the
 * process is not draining, so a load balancer stops sending new work before shutdown.
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
    for (const [name, check] of Object.entries(checks)) {
      try {
        await withTimeout(Promise.resolve(check()), 2000);
        results[name] = "ok";
      } catch (error) {
        ready = false;
        results[name] = error instanceof Error ? error.message : "failed";
      }
    }
    if (!ready) res.set("Retry-After", String(defaultRetryAfterSeconds));
    res.status(ready ? 200 : 503).json({ status: ready ? "ready" : "not ready", checks: results });
  });
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}
