import { migrate, outboxSink, startOutboxRelay, type Bus, type CallerVerifier, type Db, type HealthState, type Logger } from "@switchyard/runtime";
import type { Express } from "express";
import { createApp } from "./app.js";
import type { InferenceConfig } from "./config.js";
import type { InferenceDeps } from "./deps.js";
import { createRecorder } from "./generations/recorder.js";
import { migrations, schema } from "./migrations.js";
import { createCooldowns } from "@switchyard/upstream";

export interface InferenceStartDeps {
  db: Db;
  bus: Bus;
  logger: Logger;
  resolve: InferenceDeps["resolve"];
  holds: InferenceDeps["holds"];
  config: Pick<InferenceConfig, "providerEnv" | "MAX_BODY_BYTES" | "REQUEST_TIMEOUT_MS" | "GENERATION_FLUSH_MS" | "SPEND_HOLD_GRACE_MS">;
  verifyCaller: CallerVerifier;
  health: HealthState;
  /** Per-request logs; standalone turns them off because its router logs every request. */
  requestLogs?: boolean;
}

export interface RunningInference {
  app: Express;
  stop(): Promise<void>;
}

export async function startInference(deps: InferenceStartDeps): Promise<RunningInference> {
  const applied = await migrate(deps.db, schema, migrations);
  if (applied.length) deps.logger.info({ applied }, "inference migrations applied");
  const relay = startOutboxRelay({ db: deps.db, schema, bus: deps.bus, logger: deps.logger });
  const recorder = createRecorder({ db: deps.db, events: outboxSink(schema, relay), logger: deps.logger, flushMs: deps.config.GENERATION_FLUSH_MS });
  const app = createApp({
    db: deps.db,
    recorder,
    logger: deps.logger,
    resolve: deps.resolve,
    holds: deps.holds,
    // Identity keeps a hold at most a week.
    holdTtlMs: Math.min(deps.config.REQUEST_TIMEOUT_MS + deps.config.SPEND_HOLD_GRACE_MS, 7 * 86_400_000),
    env: deps.config.providerEnv,
    cooldowns: createCooldowns(),
    verifyCaller: deps.verifyCaller,
    maxBodyBytes: deps.config.MAX_BODY_BYTES,
    requestLogs: deps.requestLogs ?? true,
    requestTimeoutMs: deps.config.REQUEST_TIMEOUT_MS,
    health: deps.health,
    readiness: { database: () => deps.db.ping() },
  });
  return {
    app,
    async stop() {
      await recorder.stop();
      await relay.stop();
    },
  };
}
