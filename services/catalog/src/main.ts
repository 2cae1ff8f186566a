import {
  createCallerVerifier,
  createInternalClient,
  createLogger,
  createServiceSigner,
  createServiceVerifier,
  openBackends,
  requireNatsAlone,
  serveProcess,
  exitOnConfigError,
} from "@switchyard/runtime";
import { loadCatalogConfig } from "./config.js";
import { remoteEndpointStats } from "./models/endpoint-stats.js";
import { httpIdentitySource } from "./policy/identity-lookup.js";
import { startCatalog } from "./start.js";

/** The catalog service as its own process. */
exitOnConfigError();
const config = loadCatalogConfig();
const logger = createLogger({ service: "catalog", level: config.LOG_LEVEL, format: config.LOG_FORMAT });
const secret = config.SWITCHYARD_INTERNAL_SECRET;
if (!secret) {
  logger.fatal("SWITCHYARD_INTERNAL_SECRET is required when catalog runs as its own process");
  process.exit(1);
}
requireNatsAlone(config, logger, "catalog", "identity's deletions reach its guardrails only over NATS");
const { db, bus } = await openBackends(config, logger, "catalog");
const health = { draining: false };
const signer = createServiceSigner(secret, "catalog");
const catalog = await startCatalog({
  db,
  bus,
  logger,
  identity: httpIdentitySource(createInternalClient(config.IDENTITY_URL, signer)),
  endpointStats: [config.INFERENCE_URL, config.MEDIA_URL].filter((url) => url !== undefined).map((url) => remoteEndpointStats(createInternalClient(url, signer, 2_000, { retryMs: 1_000 }))),
  config,
  verifyCaller: createCallerVerifier(secret, config.SWITCHYARD_INTERNAL_SECRETS_ACCEPTED),
  verifyService: createServiceVerifier(secret, config.SWITCHYARD_INTERNAL_SECRETS_ACCEPTED),
  health,
});
process.on("SIGHUP", () => {
  catalog.reload().catch((error: unknown) => logger.error({ err: error }, "catalog reload failed; the previous catalog stays in place"));
});
await serveProcess("catalog", config, {
  handler: catalog.app,
  logger,
  health,
  onClosed: async () => {
    await catalog.stop();
    await bus.close();
    await db.close();
  },
});
