import { knownProviderResponse } from "@switchyard/contracts";
import { createCallerVerifier, createInternalClient, createLogger, createServiceSigner, createServiceVerifier, openBackends, requireNatsAlone, serveProcess, exitOnConfigError } from "@switchyard/runtime";
import { loadIdentityConfig } from "./config.js";
import { startIdentity } from "./start.js";

/** The identity service as its own process (the many-process topology). */
exitOnConfigError();
const config = loadIdentityConfig();
const logger = createLogger({ service: "identity", level: config.LOG_LEVEL, format: config.LOG_FORMAT });
if (!config.SWITCHYARD_INTERNAL_SECRET) {
  logger.fatal("SWITCHYARD_INTERNAL_SECRET is required when identity runs as its own process");
  process.exit(1);
}
requireNatsAlone(config, logger, "identity", "the charges its ledger settles and the key changes routers follow come and go only over NATS");
const { db, bus } = await openBackends(config, logger, "identity");
const health = { draining: false };
const catalog = createInternalClient(config.CATALOG_URL, createServiceSigner(config.SWITCHYARD_INTERNAL_SECRET, "identity"));
const identity = await startIdentity({
  db,
  bus,
  logger,
  config,
  verifyCaller: createCallerVerifier(config.SWITCHYARD_INTERNAL_SECRET, config.SWITCHYARD_INTERNAL_SECRETS_ACCEPTED),
  verifyService: createServiceVerifier(config.SWITCHYARD_INTERNAL_SECRET, config.SWITCHYARD_INTERNAL_SECRETS_ACCEPTED),
  health,
  knownProvider: async (slug) => (await catalog.post("/internal/providers/known", { slug }, knownProviderResponse))?.known ?? false,
});
await serveProcess("identity", config, {
  handler: identity.app,
  logger,
  health,
  onClosed: async () => {
    await identity.stop();
    await bus.close();
    await db.close();
  },
});
