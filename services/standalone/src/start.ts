import type { EndpointStatsEntry } from "@switchyard/contracts";
import { randomBytes } from "node:crypto";
import { loadCatalog, startCatalog, type RunningCatalog } from "@switchyard/catalog";
import { startIdentity, type RunningIdentity } from "@switchyard/identity";
import { startInference, type InferenceStartDeps } from "@switchyard/inference";
import { findMediaGeneration, startMedia } from "@switchyard/media";
import { startSandbox } from "@switchyard/sandbox";
import { startStorage, type RunningStorage } from "@switchyard/storage";
import { defaultReplicaId, leasedHolds } from "@switchyard/upstream";
import {
  createCallerSigner,
  createCallerVerifier,
  createServiceVerifier,
  createTracing,
  limitHeapGrowth,
  openBackends,
  serve,
  ServiceUnavailableError,
  traced,
  type Logger,
  type RunningServer,
} from "@switchyard/runtime";
import { startRouter } from "@switchyard/router";
import type { StandaloneConfigWithProviders } from "./config.js";

export interface Standalone {
  port: number;
  server: RunningServer;
  identity: RunningIdentity;
  catalog: RunningCatalog;
  storage: RunningStorage;
  /** Drains: stops accepting, finishes in-flight work, closes the bus and the database. */
  stop(): Promise<void>;
}

export interface StandaloneOptions {
  /** Where a generated bootstrap key is shown; stdout by default. */
  announce?: (text: string) => void;
  /** Tests only: how web fetch resolves the made-up host names of their local servers. */
  webFetchHosts?: InferenceStartDeps["webFetchHosts"];
  /** The console's built files, when they are not those of the `@switchyard/console` package (the npm package). */
  consoleDir?: string;
}

/**
 * Every service in one process on one port. The router hands requests to the services' apps directly,
 * without a loopback HTTP hop; the backends are embedded unless DATABASE_URL / NATS_URL are set.
 */
export async function startStandalone(config: StandaloneConfigWithProviders, logger: Logger, options: StandaloneOptions = {}): Promise<Standalone> {
  const { announce, webFetchHosts, consoleDir } = options;
  limitHeapGrowth();
  // The catalog file is read before the gateway makes its data: a bad one stops the first start before its
  // management key is created and shown (the catalog reads it again when it starts).
  await loadCatalog(config.SWITCHYARD_CONFIG);
  // One process signs and verifies its own caller headers; a random secret is enough when none is set.
  const secret = config.SWITCHYARD_INTERNAL_SECRET ?? randomBytes(32).toString("hex");
  const own = logger.child({ service: "standalone" });
  // Events wait until every service below has subscribed its consumers (see `bus.release` further down).
  const { db, bus } = await openBackends(config, own, "standalone", { holdEvents: true });
  const health = { draining: false };
  // One exporter for the process; each service's spans carry its own service.name, as in a cluster.
  const tracing = createTracing(config, own);
  const tracer = (service: string) => tracing?.tracer(service);
  // A key's change reaches the router's cache at its commit, so the next request already sees it.
  let forgetKey = (_hash: string) => {}; // the router's, once it runs
  let knownProvider = (_slug: string) => false; // catalog's, once it runs
  let forgetWorkspace = (_id: string) => {}; // catalog's, once it runs
  // Inference's and media's endpoint statistics, once they run.
  let inferenceStats = (): EndpointStatsEntry[] => [];
  let mediaStats = (): EndpointStatsEntry[] => [];
  const identity = await startIdentity({
    db,
    bus,
    logger: logger.child({ service: "identity" }),
    config,
    verifyCaller: createCallerVerifier(secret),
    verifyService: createServiceVerifier(secret),
    health,
    requestLogs: false,
    keyChanged: (hash) => forgetKey(hash),
    knownProvider: async (slug) => knownProvider(slug),
    workspaceChanged: (id) => forgetWorkspace(id),
    ...(announce ? { announce } : {}),
  });
  const catalog = await startCatalog({
    db,
    bus,
    logger: logger.child({ service: "catalog" }),
    identity: { workspacePolicy: identity.workspacePolicy, describeKeys: identity.describeKeys, writeBudgets: identity.writeBudgets },
    endpointStats: [async () => inferenceStats(), async () => mediaStats()],
    config,
    verifyCaller: createCallerVerifier(secret),
    verifyService: createServiceVerifier(secret),
    health,
    requestLogs: false,
  });
  knownProvider = catalog.knownProvider;
  forgetWorkspace = catalog.forgetWorkspace;
  const storage = await startStorage({
    db,
    bus,
    logger: logger.child({ service: "storage" }),
    providerKey: identity.providerKey,
    workspaceOrganization: async (id) => (await identity.workspacePolicy(id))?.organization_id,
    config,
    verifyCaller: createCallerVerifier(secret),
    verifyService: createServiceVerifier(secret),
    health,
    requestLogs: false,
  });
  // Shell tools run in the sandbox, which reports their files to storage in-process.
  const sandbox =
    config.SANDBOX_RUNNER === "off"
      ? undefined
      : await startSandbox({
          db,
          logger: logger.child({ service: "sandbox" }),
          reportFiles: (containerId, body) => storage.syncContainerFiles(containerId, body),
          config,
          verifyService: createServiceVerifier(secret),
          health,
          requestLogs: false,
        });
  // Inference and media hold spend as one replica: the whole process lives and dies together.
  const holds = await leasedHolds(identity.holds, {
    owner: config.SWITCHYARD_REPLICA_ID ?? defaultReplicaId("standalone", config.PORT),
    leaseMs: config.SPEND_HOLD_LEASE_MS,
    logger: logger.child({ service: "inference" }),
  });
  const inference = await startInference({
    db,
    bus,
    logger: logger.child({ service: "inference" }),
    resolve: (request) => catalog.resolveModel(request),
    holds: holds.holds,
    providerKey: identity.providerKey,
    content: storage.generationContent,
    mediaGenerations: { find: (id, scope) => findMediaGeneration(db, scope, id) },
    config,
    verifyCaller: createCallerVerifier(secret),
    verifyService: createServiceVerifier(secret),
    health,
    requestLogs: false,
    sandbox,
    ...(webFetchHosts ? { webFetchHosts } : {}),
  });
  const media = await startMedia({
    db,
    bus,
    logger: logger.child({ service: "media" }),
    resolve: (request) => catalog.resolveModel(request),
    holds: holds.holds,
    providerKey: identity.providerKey,
    config,
    verifyCaller: createCallerVerifier(secret),
    verifyService: createServiceVerifier(secret),
    health,
    requestLogs: false,
  });
  inferenceStats = inference.endpointStats;
  mediaStats = media.endpointStats;
  const router = await startRouter({
    logger: logger.child({ service: "router" }),
    bus,
    db,
    identity: {
      // As over HTTP, where identity's failure answers 5xx: a lookup that failed (its database out of reach)
      // is identity being unavailable, which the router answers 503, not its own bug.
      authenticate: (hash) =>
        identity.authenticate(hash).catch((error: unknown) => {
          throw new ServiceUnavailableError(`identity could not look the key up: ${(error as Error).message}`, { cause: error });
        }),
      accessTokenKeys: identity.accessTokenKeys,
      policyActive: (id) =>
        identity.policyActive(id).catch((error: unknown) => {
          throw new ServiceUnavailableError(`identity could not check the federation policy: ${(error as Error).message}`, { cause: error });
        }),
    },
    signCaller: createCallerSigner(secret),
    targets: {
      identity: { kind: "handler", handler: traced(tracer("identity"), identity.app) },
      catalog: { kind: "handler", handler: traced(tracer("catalog"), catalog.app) },
      inference: { kind: "handler", handler: traced(tracer("inference"), inference.app) },
      media: { kind: "handler", handler: traced(tracer("media"), media.app) },
      storage: { kind: "handler", handler: traced(tracer("storage"), storage.app) },
    },
    health,
    consoleDir,
    config,
  });
  forgetKey = router.forgetKey;
  // Every consumer has subscribed: what the relays found in the outboxes at start goes now.
  bus.release?.();
  const server = await serve({
    handler: traced(tracer("router"), router.app),
    port: config.PORT,
    host: config.HOST,
    logger: own,
    health,
    drainTimeoutMs: config.DRAIN_TIMEOUT_MS,
    headersTimeoutMs: config.HEADERS_TIMEOUT_MS,
    onClosed: async () => {
      await router.stop();
      await inference.stop();
      await media.stop();
      await holds.stop();
      await sandbox?.stop();
      await storage.stop();
      await catalog.stop();
      await identity.stop();
      await tracing?.stop();
      await bus.close();
      await db.close();
    },
  });
  return { port: server.port, server, identity, catalog, storage, stop: () => server.drain() };
}
