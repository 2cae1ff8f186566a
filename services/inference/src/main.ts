import {
  createCallerVerifier,
  createInternalClient,
  createLogger,
  createServiceSigner,
  openBackends,
  serveProcess,
} from "@switchyard/runtime";
import { remoteHolds, remoteResolve } from "@switchyard/upstream";
import { loadInferenceConfig } from "./config.js";
import { startInference } from "./start.js";

/** The inference service as its own process. */
const config = loadInferenceConfig();
const logger = createLogger({ service: "inference", level: config.LOG_LEVEL });
const secret = config.SWITCHYARD_INTERNAL_SECRET;
if (!secret) {
  logger.fatal("SWITCHYARD_INTERNAL_SECRET is required when inference runs as its own process");
  process.exit(1);
}
const { db, bus } = await openBackends(config, logger, "inference");
const signer = createServiceSigner(secret, "inference");
const catalog = createInternalClient(config.CATALOG_URL, signer);
const identity = createInternalClient(config.IDENTITY_URL, signer);
const health = { draining: false };
const inference = await startInference({
  db,
  bus,
  logger,
  resolve: remoteResolve(catalog),
  holds: remoteHolds(identity),
  config,
  verifyCaller: createCallerVerifier(secret),
  health,
});
await serveProcess("inference", config, {
  handler: inference.app,
  logger,
  health,
  onClosed: async () => {
    await inference.stop();
    await bus.close();
    await db.close();
  },
});
