import {
  busReadiness,
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
import type { GuardrailBudget, HoldDecision, HoldRequest, KeyAuthentication, KeyDescription, WorkspacePolicy } from "@switchyard/contracts";
import type { RequestListener } from "node:http";
import type { JWK } from "jose";
import { createApp } from "./app.js";
import type { IdentityConfig } from "./config.js";
import { describeKeys, workspacePolicy } from "./internal.js";
import { authenticateKey } from "./keys/service.js";
import { migrations, schema } from "./migrations.js";
import { bootstrap, createOrganization, type NewOrganization } from "./organizations.js";
import { policyActive } from "./federation/policies.js";
import { writeBudgets } from "./spend/budgets.js";
import { deleteExpiredHolds, placeHold, releaseHold } from "./spend/holds.js";
import { startAccessTokens } from "./federation/access-tokens.js";
import { forgetExpiredTokenIds } from "./federation/exchange.js";
import { createSubjectTokenVerifier } from "./federation/subject-token.js";
import { startLedger } from "./spend/ledger.js";
import { detachOwnerHolds, releaseOwnerHolds, renewHolds, startHoldReaper } from "./spend/leases.js";
import { openProviderKey } from "./provider-keys/records.js";
import { createSealer } from "./provider-keys/sealed.js";
import { encryptionSecret } from "./provider-keys/secret.js";

export interface IdentityDeps {
  db: Db;
  bus: Bus;
  logger: Logger;
  config: Pick<
    IdentityConfig,
    "SWITCHYARD_BOOTSTRAP_KEY" | "SWITCHYARD_ENCRYPTION_KEY" | "SPEND_HOLD_LEASE_MS" | "SPEND_HOLD_REAP_MS" | "DATABASE_URL" | "SWITCHYARD_DATA_DIR" | "RATE_LIMIT_PER_MINUTE" | "MAX_BODY_BYTES" | "FEDERATION_ALLOW_INSECURE_ISSUERS" | "FEDERATION_EXCHANGES_PER_MINUTE" | "FEDERATION_KEYS_REFRESH_MS"
  >;
  verifyCaller: CallerVerifier;
  verifyService: ServiceVerifier;
  health: HealthState;
  /** Per-request logs; standalone turns them off because its router logs every request. */
  requestLogs?: boolean;
  /** Where a generated bootstrap key is shown; stdout in a process. */
  announce?: (text: string) => void;
  /**
   * Told after a key's change commits, for caches of keys in the same process (standalone's router), which
   * then drop the key before the change's response is sent instead of when its event arrives.
   */
  keyChanged?: (hash: string) => void;
  /** Told after a workspace's change commits, likewise (standalone's catalog drops its copy of the policy). */
  workspaceChanged?: (id: string) => void;
  /** Whether the operator's catalog has a provider: a workspace brings its own key only for one it has. */
  knownProvider(slug: string): Promise<boolean>;
}

export interface RunningIdentity {
  app: RequestListener;
  /** The router's key lookup without an HTTP hop, for the one-process deployment. */
  authenticate(hash: string): Promise<KeyAuthentication | undefined>;
  /** Workspace policies and key names for catalog, without an HTTP hop. */
  workspacePolicy(workspaceId: string): Promise<WorkspacePolicy | undefined>;
  describeKeys(organizationId: string, hashes: readonly string[]): Promise<KeyDescription[]>;
  /** Catalog's guardrail budgets, written where holds read them. */
  writeBudgets(budgets: readonly GuardrailBudget[]): Promise<void>;
  /** Spend holds for inference and media, and their owners' leases, without an HTTP hop. */
  holds: {
    hold(request: HoldRequest): Promise<HoldDecision>;
    release(generationId: string): Promise<boolean>;
    renew(owner: string, leaseMs: number): Promise<number>;
    releaseOwner(owner: string): Promise<number>;
    detach(owner: string): Promise<number>;
  };
  /** Public keys of the access tokens identity signs, for the router without an HTTP hop. */
  accessTokenKeys(): Promise<{ keys: JWK[] }>;
  /** Whether tokens a federation policy issued still act. */
  policyActive(id: string): Promise<boolean>;
  /** A workspace's own key for a provider (BYOK), for storage without an HTTP hop. */
  providerKey(workspaceId: string, provider: string, organizationId?: string): Promise<string | undefined>;
  /** An operator action: a new organization with its default workspace and first management key. */
  createOrganization(name: string): Promise<NewOrganization>;
  stop(): Promise<void>;
}

const sweepEveryMs = 60_000;

/**
 * Migrates, starts the ledger consumer (before a producer's relay runs in the same process, which the
 * in-process bus needs) and the outbox relay, bootstraps the first management key and builds the app.
 */
export async function startIdentity(deps: IdentityDeps): Promise<RunningIdentity> {
  const { db, bus, logger } = deps;
  const applied = await migrate(db, schema, migrations);
  if (applied.length) logger.info({ applied }, "identity migrations applied");
  const ledger = await startLedger({ db, bus, logger });
  const reaper = startHoldReaper({ db, logger, everyMs: deps.config.SPEND_HOLD_REAP_MS, leaseMs: deps.config.SPEND_HOLD_LEASE_MS });
  const sweep = setInterval(() => {
    Promise.all([deleteExpiredHolds(db), forgetExpiredTokenIds(db)]).then(
      ([holds, tokenIds]) => (holds > 0 || tokenIds > 0) && logger.info({ holds, tokenIds }, "expired spend holds and subject-token ids removed"),
      (error: unknown) => logger.warn({ err: error }, "could not remove expired spend holds and subject-token ids"),
    );
  }, sweepEveryMs);
  sweep.unref();
  const relay = startOutboxRelay({ db, schema, bus, logger });
  const secret = await encryptionSecret(deps.config);
  const sealer = secret ? createSealer(secret) : undefined;
  const accessTokens = await startAccessTokens(db, logger, sealer);
  const allowInsecureIssuers = deps.config.FEDERATION_ALLOW_INSECURE_ISSUERS;
  if (allowInsecureIssuers) logger.warn("FEDERATION_ALLOW_INSECURE_ISSUERS is on: plain-http and private-address issuers are trusted (development only)");
  const events = outboxSink(schema, relay);
  const result = await bootstrap({ db, events }, deps.config.SWITCHYARD_BOOTSTRAP_KEY);
  if (result.kind === "generated") {
    (deps.announce ?? ((text) => process.stdout.write(text)))(
      `\nSwitchyard bootstrap: a management key was created. It is shown only this once:\n\n  ${result.managementKey}\n\n`,
    );
  } else if (result.kind === "configured") {
    logger.info("bootstrap management key from SWITCHYARD_BOOTSTRAP_KEY is in place");
  }
  const app = createApp({
    db,
    sealer,
    events,
    knownProvider: deps.knownProvider,
    keyChanged: (hash) => deps.keyChanged?.(hash),
    workspaceChanged: (id) => deps.workspaceChanged?.(id),
    accessTokens,
    subjectTokens: createSubjectTokenVerifier({ allowInsecureIssuers, minRefreshIntervalMs: deps.config.FEDERATION_KEYS_REFRESH_MS }),
    federation: { allowInsecureIssuers, exchangesPerPolicyPerMinute: deps.config.FEDERATION_EXCHANGES_PER_MINUTE },
    logger,
    verifyCaller: deps.verifyCaller,
    verifyService: deps.verifyService,
    defaultRateLimitPerMinute: deps.config.RATE_LIMIT_PER_MINUTE,
    maxBodyBytes: deps.config.MAX_BODY_BYTES,
    requestLogs: deps.requestLogs ?? true,
    health: deps.health,
    readiness: { database: () => db.ping(), ...busReadiness(bus) },
  });
  return {
    app,
    authenticate: (hash) => authenticateKey(db, hash),
    workspacePolicy: (id) => workspacePolicy(db, id),
    describeKeys: (organizationId, hashes) => describeKeys(db, organizationId, hashes),
    writeBudgets: (budgets) => writeBudgets(db, budgets),
    createOrganization: (name) => createOrganization({ db, events }, name),
    holds: {
      hold: (request) => placeHold(db, request),
      release: (generationId) => releaseHold(db, generationId),
      renew: (owner, leaseMs) => renewHolds(db, owner, leaseMs),
      releaseOwner: (owner) => releaseOwnerHolds(db, owner),
      detach: (owner) => detachOwnerHolds(db, owner),
    },
    accessTokenKeys: () => accessTokens.jwks(),
    policyActive: (id) => policyActive(db, id),
    providerKey: async (workspaceId, provider, organizationId) => (sealer ? openProviderKey(db, sealer, workspaceId, provider, organizationId) : undefined),
    async stop() {
      clearInterval(sweep);
      reaper.stop();
      await ledger.stop();
      await relay.stop();
    },
  };
}
