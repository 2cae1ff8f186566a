import { busReadiness, migrate, outboxSink, startOutboxRelay, upstreamTimeoutsOf, type Bus, type CallerVerifier, type Db, type HealthState, type Logger, type ServiceVerifier } from "@switchyard/runtime";
import { endpointStatsEntries, startEndpointStats, startSharedHealth } from "@switchyard/upstream";
import type { EndpointStatsEntry } from "@switchyard/contracts";
import type { Express } from "express";
import { createApp } from "./app.js";
import type { MediaConfig } from "./config.js";
import type { MediaDeps } from "./deps.js";
import { migrations, schema } from "./migrations.js";
import { createMediaRecords } from "./record.js";
import { imagers, speakers, transcribers } from "./providers/index.js";

export interface MediaStartDeps {
  db: Db;
  bus: Bus;
  logger: Logger;
  resolve: MediaDeps["resolve"];
  holds: MediaDeps["holds"];
  providerKey: MediaDeps["providerKey"];
  config: Pick<
    MediaConfig,
    | "providerEnv"
    | "MAX_UPLOAD_BYTES"
    | "MEDIA_TIMEOUT_MS"
    | "UPSTREAM_FIRST_BYTE_TIMEOUT_MS"
    | "UPSTREAM_IDLE_TIMEOUT_MS"
    | "UPSTREAM_FAILURE_COOLDOWN_MS"
    | "ENDPOINT_STATS_BUCKET_MS"
    | "ENDPOINT_STATS_INTERVAL_MS"
    | "SPEND_HOLD_GRACE_MS"
    | "SPEND_CHARGE_BEYOND_HOLD"
    | "MAX_AUDIO_BYTES"
    | "MAX_REFERENCE_BYTES"
    | "REFERENCE_FETCH_TIMEOUT_MS"
    | "REFERENCE_FETCH_ALLOW_PRIVATE"
  >;
  verifyCaller: CallerVerifier;
  verifyService: ServiceVerifier;
  health: HealthState;
  /** Per-request logs; standalone turns them off because its router logs every request. */
  requestLogs?: boolean;
}

export interface RunningMedia {
  app: Express;
  /** How each endpoint has been doing, every replica's generations together. */
  endpointStats(): EndpointStatsEntry[];
  stop(): Promise<void>;
}

export async function startMedia(deps: MediaStartDeps): Promise<RunningMedia> {
  const applied = await migrate(deps.db, schema, migrations);
  if (applied.length) deps.logger.info({ applied }, "media migrations applied");
  const relay = startOutboxRelay({ db: deps.db, schema, bus: deps.bus, logger: deps.logger });
  const { config } = deps;
  const timeouts = upstreamTimeoutsOf(config);
  const endpoints = await startSharedHealth({ bus: deps.bus, subject: "media.endpoint.health.v1", logger: deps.logger, timeouts });
  const stats = startEndpointStats({ db: deps.db, schema, logger: deps.logger, bucketMs: config.ENDPOINT_STATS_BUCKET_MS, intervalMs: config.ENDPOINT_STATS_INTERVAL_MS });
  const records = createMediaRecords({ db: deps.db, events: outboxSink(schema, relay), logger: deps.logger });
  const app = createApp({
    db: deps.db,
    records,
    logger: deps.logger,
    resolve: deps.resolve,
    holds: deps.holds,
    providerKey: deps.providerKey,
    // Identity keeps a hold at most a week.
    holdTtlMs: Math.min(config.MEDIA_TIMEOUT_MS + config.SPEND_HOLD_GRACE_MS, 7 * 86_400_000),
    chargeBeyondHold: config.SPEND_CHARGE_BEYOND_HOLD,
    env: config.providerEnv,
    cooldowns: endpoints,
    stats,
    transcribers,
    imagers,
    speakers,
    verifyCaller: deps.verifyCaller,
    verifyService: deps.verifyService,
    maxBodyBytes: config.MAX_UPLOAD_BYTES,
    maxAudioBytes: config.MAX_AUDIO_BYTES,
    references: { maxBytes: config.MAX_REFERENCE_BYTES, timeoutMs: config.REFERENCE_FETCH_TIMEOUT_MS, allowPrivate: config.REFERENCE_FETCH_ALLOW_PRIVATE },
    requestTimeoutMs: config.MEDIA_TIMEOUT_MS,
    timeouts,
    requestLogs: deps.requestLogs ?? true,
    health: deps.health,
    readiness: { database: () => deps.db.ping(), ...busReadiness(deps.bus) },
  });
  return {
    app,
    endpointStats: () => endpointStatsEntries(stats),
    async stop() {
      // Records first: their events go to the outbox, which the relay publishes.
      await records.stop();
      await relay.stop();
      await endpoints.stop();
      await stats.stop();
    },
  };
}
