import {
  connectNatsBus,
  createCallerSigner,
  createLogger,
  createServiceSigner,
  openPostgres,
  serveProcess,
  exitOnConfigError,
} from "@switchyard/runtime";
import { httpIdentityClient } from "./auth/identity-client.js";
import { loadRouterConfig } from "./config.js";
import { startRouter } from "./start.js";

/** The router as its own process, in front of services that run as their own processes. */
exitOnConfigError();
const config = loadRouterConfig();
const logger = createLogger({ service: "router", level: config.LOG_LEVEL, format: config.LOG_FORMAT });
const secret = config.SWITCHYARD_INTERNAL_SECRET;
if (!secret || !config.NATS_URL) {
  logger.fatal("the router as its own process needs SWITCHYARD_INTERNAL_SECRET and NATS_URL (use standalone for one process)");
  process.exit(1);
}
const bus = await connectNatsBus({ url: config.NATS_URL, namespace: config.NATS_NAMESPACE, logger, name: "router" });
const db = config.DATABASE_URL ? openPostgres({ url: config.DATABASE_URL, applicationName: "router", preparedStatements: config.DATABASE_PREPARED_STATEMENTS }) : undefined;
const health = { draining: false };
const router = await startRouter({
  logger,
  bus,
  ...(db ? { db } : {}),
  identity: httpIdentityClient(config.IDENTITY_URL[0]!, createServiceSigner(secret, "router")),
  signCaller: createCallerSigner(secret),
  targets: {
    identity: { kind: "url", urls: config.IDENTITY_URL },
    catalog: { kind: "url", urls: config.CATALOG_URL },
    inference: { kind: "url", urls: config.INFERENCE_URL },
    media: { kind: "url", urls: config.MEDIA_URL },
    storage: { kind: "url", urls: config.STORAGE_URL },
  },
  health,
  config,
});
await serveProcess("router", config, {
  handler: router.app,
  logger,
  health,
  onClosed: async () => {
    await router.stop();
    await bus.close();
    await db?.close();
  },
});
