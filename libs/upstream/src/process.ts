import {
  createCallerVerifier,
  createServiceVerifier,
  createInternalClient,
  createLogger,
  createServiceSigner,
  openBackends,
  requireNatsAlone,
  serveProcess,
  type BackendConfig,
  type Bus,
  type CallerVerifier,
  type ServiceVerifier,
  type Db,
  type HealthState,
  type InternalClient,
  type InternalClientOptions,
  type ListenConfig,
  type Logger,
  type TracingConfig,
} from "@switchyard/runtime";
import type { ResolvedModel, ResolveRequest } from "@switchyard/contracts";
import type { RequestListener } from "node:http";
import { defaultReplicaId, leasedHolds } from "./hold-leases.js";
import type { SpendHolds } from "./holds.js";
import { remoteHolds, remoteProviderKey, remoteResolve } from "./remote.js";
import { cachedResolve } from "./remote-memory.js";

export interface ProviderServiceConfig extends BackendConfig, ListenConfig, TracingConfig {
  LOG_LEVEL: string;
  LOG_FORMAT: "auto" | "json" | "pretty";
  SWITCHYARD_INTERNAL_SECRET?: string | undefined;
  SWITCHYARD_INTERNAL_SECRETS_ACCEPTED: readonly string[];
  CATALOG_URL: string;
  IDENTITY_URL: string;
  SWITCHYARD_REPLICA_ID?: string | undefined;
  SPEND_HOLD_LEASE_MS: number;
}

/** What a service that calls providers needs from the deployment. */
export interface ProviderServiceDeps {
  db: Db;
  bus: Bus;
  logger: Logger;
  resolve(request: ResolveRequest): Promise<ResolvedModel>;
  holds: SpendHolds;
  /** The workspace's own key for a provider (BYOK), opened by identity. */
  providerKey(workspaceId: string, provider: string): Promise<string | undefined>;
  verifyCaller: CallerVerifier;
  /** Other services' calls of this one's internal routes. */
  verifyService: ServiceVerifier;
  health: HealthState;
  /** A client of another service's internal routes, signed as this service. */
  serviceClient(baseUrl: string, timeoutMs?: number, options?: InternalClientOptions): InternalClient;
}

/**
 * The process entry of a service that calls providers (inference, media): it resolves models with catalog
 * and holds spend with identity over HTTP, and drains on SIGTERM before closing its bus and database.
 */
export async function runProviderService(
  name: string,
  config: ProviderServiceConfig,
  start: (deps: ProviderServiceDeps) => Promise<{ app: RequestListener; stop(): Promise<void> }>,
): Promise<void> {
  const logger = createLogger({ service: name, level: config.LOG_LEVEL, format: config.LOG_FORMAT });
  const secret = config.SWITCHYARD_INTERNAL_SECRET;
  if (!secret) {
    logger.fatal(`SWITCHYARD_INTERNAL_SECRET is required when ${name} runs as its own process`);
    process.exit(1);
  }
  requireNatsAlone(config, logger, name, "its charges reach identity's ledger only over NATS");
  const { db, bus } = await openBackends(config, logger, name);
  const signer = createServiceSigner(secret, name);
  const health = { draining: false };
  // Answers that change only with an operator's change are remembered until its event, up to 30 s.
  const resolver = await cachedResolve(remoteResolve(createInternalClient(config.CATALOG_URL, signer)), bus, { ttlMs: 30_000, maxEntries: 100_000 });
  // Every request's hold goes to identity, which reads the key's limit where it writes the hold: nothing
  // here remembers that a key has no limit, so a limit set a moment ago binds the next request.
  const identity = createInternalClient(config.IDENTITY_URL, signer);
  const holds = await leasedHolds(remoteHolds(identity), {
    owner: config.SWITCHYARD_REPLICA_ID ?? defaultReplicaId(name, config.PORT),
    leaseMs: config.SPEND_HOLD_LEASE_MS,
    logger,
  });
  const service = await start({
    db,
    bus,
    logger,
    resolve: resolver.resolve,
    holds: holds.holds,
    providerKey: remoteProviderKey(identity),
    verifyCaller: createCallerVerifier(secret, config.SWITCHYARD_INTERNAL_SECRETS_ACCEPTED),
    verifyService: createServiceVerifier(secret, config.SWITCHYARD_INTERNAL_SECRETS_ACCEPTED),
    health,
    serviceClient: (baseUrl, timeoutMs, options) => createInternalClient(baseUrl, signer, timeoutMs, options),
  });
  await serveProcess(name, config, {
    handler: service.app,
    logger,
    health,
    onClosed: async () => {
      await service.stop();
      await resolver.stop();
      await holds.stop();
      await bus.close();
      await db.close();
    },
  });
}
