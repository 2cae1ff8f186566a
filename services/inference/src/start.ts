import { busReadiness, migrate, outboxSink, startOutboxRelay, upstreamTimeoutsOf, type Bus, type CallerVerifier, type Db, type HealthState, type Logger, type ServiceVerifier } from "@switchyard/runtime";
import type { RequestListener } from "node:http";
import { createApp } from "./app.js";
import type { InferenceConfig } from "./config.js";
import type { InferenceDeps } from "./deps.js";
import { createRecorder } from "./generations/recorder.js";
import { ResponseCacheStore, startCachePurge } from "./cache/store.js";
import { migrations, schema } from "./migrations.js";
import { endpointStatsEntries, startEndpointStats, startSharedHealth } from "@switchyard/upstream";
import type { EndpointStatsEntry } from "@switchyard/contracts";
import type { Sandbox } from "./tools/run.js";
import { searchBackend } from "./tools/search.js";
import type { WebFetchOptions } from "./tools/web-fetch.js";
import { startBroadcast } from "./broadcast/consumer.js";
import { broadcastDestinations } from "./broadcast/config.js";
import { sessionEndpoints } from "./routing/sessions.js";

export interface InferenceStartDeps {
  db: Db;
  bus: Bus;
  logger: Logger;
  resolve: InferenceDeps["resolve"];
  holds: InferenceDeps["holds"];
  providerKey: InferenceDeps["providerKey"];
  content: InferenceDeps["content"];
  mediaGenerations: InferenceDeps["mediaGenerations"];
  config: Pick<
    InferenceConfig,
    | "providerEnv"
    | "MAX_BODY_BYTES"
    | "REQUEST_TIMEOUT_MS"
    | "UPSTREAM_FIRST_BYTE_TIMEOUT_MS"
    | "UPSTREAM_IDLE_TIMEOUT_MS"
    | "UPSTREAM_FAILURE_COOLDOWN_MS"
    | "ENDPOINT_STATS_BUCKET_MS"
    | "ENDPOINT_STATS_INTERVAL_MS"
    | "GENERATION_FLUSH_MS"
    | "SPEND_HOLD_GRACE_MS"
    | "SPEND_CHARGE_BEYOND_HOLD"
    | "SERVER_TOOL_MAX_STEPS"
    | "RESPONSE_CACHE_MAX_TTL_SECONDS"
    | "RESPONSE_CACHE_MAX_ENTRY_BYTES"
    | "RESPONSE_CACHE_PURGE_INTERVAL_MS"
    | "WEB_SEARCH_KIND"
    | "WEB_SEARCH_URL"
    | "WEB_SEARCH_API_KEY"
    | "WEB_SEARCH_TIMEOUT_MS"
    | "WEB_FETCH_ENABLED"
    | "WEB_FETCH_TIMEOUT_MS"
    | "WEB_FETCH_MAX_BYTES"
    | "OTEL_EXPORTER_OTLP_ENDPOINT"
    | "OTEL_EXPORTER_OTLP_HEADERS"
    | "OTEL_SERVICE_NAME"
    | "BROADCAST_WEBHOOK_URL"
    | "BROADCAST_WEBHOOK_SECRET"
  >;
  /** The sandbox service for the shell tools: in-process in standalone, over HTTP otherwise; none refuses them. */
  sandbox?: Sandbox | undefined;
  verifyCaller: CallerVerifier;
  /** Other services' calls to `/internal/...` (catalog's, for endpoint statistics). */
  verifyService: ServiceVerifier;
  health: HealthState;
  /** Per-request logs; standalone turns them off because its router logs every request. */
  requestLogs?: boolean;
  /** Tests only: how web fetch resolves made-up host names to their local servers (never set from the environment). */
  webFetchHosts?: Pick<WebFetchOptions, "resolve" | "localHosts">;
}

export interface RunningInference {
  app: RequestListener;
  /** How each endpoint has been doing, every replica's generations together. */
  endpointStats(): EndpointStatsEntry[];
  stop(): Promise<void>;
}

export async function startInference(deps: InferenceStartDeps): Promise<RunningInference> {
  const applied = await migrate(deps.db, schema, migrations);
  if (applied.length) deps.logger.info({ applied }, "inference migrations applied");
  const relay = startOutboxRelay({ db: deps.db, schema, bus: deps.bus, logger: deps.logger });
  const broadcast = await startBroadcast(deps.bus, broadcastDestinations(deps.config), deps.logger);
  const timeouts = upstreamTimeoutsOf(deps.config);
  const endpoints = await startSharedHealth({ bus: deps.bus, subject: "inference.endpoint.health.v1", logger: deps.logger, timeouts });
  const stats = startEndpointStats({ db: deps.db, schema, logger: deps.logger, bucketMs: deps.config.ENDPOINT_STATS_BUCKET_MS, intervalMs: deps.config.ENDPOINT_STATS_INTERVAL_MS });
  const cacheStore = new ResponseCacheStore(deps.db);
  const cachePurge = startCachePurge(cacheStore, deps.config.RESPONSE_CACHE_PURGE_INTERVAL_MS, deps.logger);
  const recorder = createRecorder({ db: deps.db, events: outboxSink(schema, relay), logger: deps.logger, flushMs: deps.config.GENERATION_FLUSH_MS, stats });
  const app = createApp({
    db: deps.db,
    recorder,
    logger: deps.logger,
    resolve: deps.resolve,
    holds: deps.holds,
    providerKey: deps.providerKey,
    content: deps.content,
    mediaGenerations: deps.mediaGenerations,
    // Identity keeps a hold at most a week.
    holdTtlMs: Math.min(deps.config.REQUEST_TIMEOUT_MS + deps.config.SPEND_HOLD_GRACE_MS, 7 * 86_400_000),
    chargeBeyondHold: deps.config.SPEND_CHARGE_BEYOND_HOLD,
    env: deps.config.providerEnv,
    cooldowns: endpoints,
    stats,
    sessions: sessionEndpoints(),
    verifyCaller: deps.verifyCaller,
    verifyService: deps.verifyService,
    maxBodyBytes: deps.config.MAX_BODY_BYTES,
    requestLogs: deps.requestLogs ?? true,
    requestTimeoutMs: deps.config.REQUEST_TIMEOUT_MS,
    timeouts,
    sandbox: deps.sandbox,
    search: searchBackend(deps.config),
    webFetch: deps.config.WEB_FETCH_ENABLED
      ? { timeoutMs: deps.config.WEB_FETCH_TIMEOUT_MS, maxBytes: deps.config.WEB_FETCH_MAX_BYTES, ...deps.webFetchHosts }
      : undefined,
    maxToolSteps: deps.config.SERVER_TOOL_MAX_STEPS,
    responseCache: { store: cacheStore, maxTtlSeconds: deps.config.RESPONSE_CACHE_MAX_TTL_SECONDS, maxEntryBytes: deps.config.RESPONSE_CACHE_MAX_ENTRY_BYTES, logger: deps.logger },
    health: deps.health,
    readiness: { database: () => deps.db.ping(), ...busReadiness(deps.bus) },
  });
  return {
    app,
    endpointStats: () => endpointStatsEntries(stats),
    async stop() {
      cachePurge.stop();
      await recorder.stop();
      await relay.stop();
      await broadcast?.stop();
      await endpoints.stop();
      await stats.stop();
    },
  };
}
