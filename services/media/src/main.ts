import {
  createCallerVerifier,
  createInternalClient,
  createLogger,
  createServiceSigner,
  openBackends,
  serveProcess,
} from "@switchyard/runtime";
import { remoteHolds, remoteResolve } from "@switchyard/upstream";
import { loadMediaConfig } from "./config.js";
import { startMedia } from "./start.js";

/** The media service as its own process. */
const config = loadMediaConfig();
const logger = createLogger({ service: "media", level: config.LOG_LEVEL });
const secret = config.SWITCHYARD_INTERNAL_SECRET;
if (!secret) {
  logger.fatal("SWITCHYARD_INTERNAL_SECRET is required when media runs as its own process");
  process.exit(1);
}
const { db, bus } = await openBackends(config, logger, "media");
const signer = createServiceSigner(secret, "media");
const catalog = createInternalClient(config.CATALOG_URL, signer);
const identity = createInternalClient(config.IDENTITY_URL, signer);
const health = { draining: false };
const media = await startMedia({
  db,
  bus,
  logger,
  resolve: remoteResolve(catalog),
  holds: remoteHolds(identity),
  config,
  verifyCaller: createCallerVerifier(secret),
  health,
});
await serveProcess("media", config, {
  handler: media.app,
  logger,
  health,
  onClosed: async () => {
    await media.stop();
    await bus.close();
    await db.close();
  },
});
