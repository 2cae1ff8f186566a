import {
  busReadiness,
  enqueueEvent,
  migrate,
  outboxSink,
  startOutboxRelay,
  type Bus,
  type CallerVerifier,
  type Db,
  type HealthState,
  type Logger,
  type ServiceVerifier,
} from "@switchyard/runtime";
import type { Express } from "express";
import { createApp } from "./app.js";
import type { CatalogConfig } from "./config.js";
import type { CatalogDeps } from "./deps.js";
import { keepWritingAllBudgets } from "./guardrails/budgets.js";
import { startDeletionsConsumer } from "./guardrails/deletions-consumer.js";
import { guardrailCache } from "./guardrails/service.js";
import { migrations, schema } from "./migrations.js";
import { openCatalogState } from "./models/state.js";
import { identityLookup, type IdentitySource } from "./policy/identity-lookup.js";
import type { ResolveRequest } from "@switchyard/contracts";
import { resolveModel } from "./policy/resolve-model.js";
import { cachedEndpointStats, type EndpointStatsSource } from "./models/endpoint-stats.js";

export interface CatalogStartDeps {
  db: Db;
  bus: Bus;
  logger: Logger;
  identity: IdentitySource;
  /** Live endpoint figures of inference and media (over HTTP, or in-process in standalone). */
  endpointStats: readonly EndpointStatsSource[];
  config: Pick<CatalogConfig, "SWITCHYARD_CONFIG" | "providerEnv" | "MAX_BODY_BYTES">;
  verifyCaller: CallerVerifier;
  verifyService: ServiceVerifier;
  health: HealthState;
  /** Per-request logs; standalone turns them off because its router logs every request. */
  requestLogs?: boolean;
}

export interface RunningCatalog {
  app: Express;
  /** Model resolution without an HTTP hop, for the one-process deployment. */
  resolveModel(request: ResolveRequest): ReturnType<typeof resolveModel>;
  /** Whether the catalog has a provider, without an HTTP hop. */
  knownProvider(slug: string): boolean;
  /** Drops the remembered policy of a workspace that changed in this process (standalone), ahead of its event. */
  forgetWorkspace(id: string): void;
  /** Re-reads the operator file (SIGHUP, `POST /catalog/reload`) and tells the other services. */
  reload(): Promise<{ models: number; providers: number }>;
  stop(): Promise<void>;
}

export async function startCatalog(deps: CatalogStartDeps): Promise<RunningCatalog> {
  const { db, bus, logger } = deps;
  const catalog = await openCatalogState(deps.config.SWITCHYARD_CONFIG, deps.config.providerEnv, logger);
  const applied = await migrate(db, schema, migrations);
  if (applied.length) logger.info({ applied }, "catalog migrations applied");
  const relay = startOutboxRelay({ db, schema, bus, logger });
  const events = outboxSink(schema, relay);
  const identity = identityLookup(deps.identity);
  // Workspace preferences change rarely; every catalog replica drops its cached copy when one does.
  const workspaceEvents = await bus.listen(["identity.workspace.>"], async (event) => {
    if ("id" in event.data) identity.forget(event.data.id);
  });
  const guardrails = guardrailCache(db);
  const budgets = keepWritingAllBudgets(db, identity, logger);
  // Every replica drops its cached guardrails when a replica changes one.
  const guardrailEvents = await bus.listen(["catalog.guardrail.>"], async () => guardrails.clear());
  const full: CatalogDeps = {
    db,
    events,
    identity,
    catalog,
    guardrails,
    endpointStats: cachedEndpointStats(deps.endpointStats, logger),
    logger,
    verifyCaller: deps.verifyCaller,
    verifyService: deps.verifyService,
    maxBodyBytes: deps.config.MAX_BODY_BYTES,
    requestLogs: deps.requestLogs ?? true,
    health: deps.health,
    readiness: { database: () => db.ping(), ...busReadiness(bus) },
  };
  // Deleted workspaces take their guardrails with them; deleted keys leave their guardrails' assignments.
  const deletions = await startDeletionsConsumer({ db, events, identity, guardrails, bus, logger });
  const countsOf = (snapshot: ReturnType<typeof catalog.current>) => ({ models: snapshot.models.length, providers: snapshot.providers.length });
  // A reload on one replica (SIGHUP, `POST /catalog/reload`) reloads every replica: each re-reads its own copy
  // of the file and then says so, and services that remember resolutions drop those made before it did.
  const ownReloads = new Set<string>();
  const reloadEvents = await bus.listen(["catalog.models.reloaded.v1"], async (event) => {
    if (ownReloads.delete(event.id)) return;
    try {
      const counts = countsOf(await catalog.reload());
      await db.transaction((tx) => events.enqueue(tx, "catalog.models.refreshed.v1", counts));
      events.committed();
    } catch (error) {
      logger.error({ err: error }, "catalog file could not be re-read after another replica's reload; this replica keeps its catalog");
    }
  });
  const reload = async () => {
    const counts = countsOf(await catalog.reload());
    const event = await db.transaction((tx) => enqueueEvent(tx, schema, "catalog.models.reloaded.v1", counts));
    ownReloads.add(event.id);
    events.committed();
    return counts;
  };
  return {
    app: createApp(full, reload),
    resolveModel: (request) => resolveModel(full, request),
    knownProvider: (slug) => catalog.current().providersBySlug.has(slug),
    forgetWorkspace: (id) => identity.forget(id),
    reload,
    async stop() {
      await workspaceEvents.stop();
      await deletions.stop();
      await guardrailEvents.stop();
      await reloadEvents.stop();
      await budgets.stop();
      await relay.stop();
    },
  };
}
