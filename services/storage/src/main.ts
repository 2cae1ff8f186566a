import { fileProvider, openProviderKeyBody, openProviderKeyResponse, workspacePolicyResponse } from "@switchyard/contracts";
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
import { loadStorageConfig } from "./config.js";
import { startStorage } from "./start.js";

/** The storage service as its own process. */
exitOnConfigError();
const config = loadStorageConfig();
const logger = createLogger({ service: "storage", level: config.LOG_LEVEL, format: config.LOG_FORMAT });
const secret = config.SWITCHYARD_INTERNAL_SECRET;
if (!secret) {
  logger.fatal("SWITCHYARD_INTERNAL_SECRET is required when storage runs as its own process");
  process.exit(1);
}
requireNatsAlone(config, logger, "storage", "identity's workspace deletions reach its files only over NATS");
const { db, bus } = await openBackends(config, logger, "storage");
const identity = createInternalClient(config.IDENTITY_URL, createServiceSigner(secret, "storage"));
const health = { draining: false };
const storage = await startStorage({
  db,
  bus,
  logger,
  async providerKey(workspaceId, provider, organizationId) {
    const body = openProviderKeyBody.parse({ organization_id: organizationId, workspace_id: workspaceId, provider: fileProvider.parse(provider) });
    return (await identity.post("/internal/provider-keys/open", body, openProviderKeyResponse))?.data.key ?? undefined;
  },
  async workspaceOrganization(workspaceId) {
    return (await identity.post("/internal/workspaces/policy", { workspace_id: workspaceId }, workspacePolicyResponse))?.data.organization_id;
  },
  config,
  verifyCaller: createCallerVerifier(secret, config.SWITCHYARD_INTERNAL_SECRETS_ACCEPTED),
  verifyService: createServiceVerifier(secret, config.SWITCHYARD_INTERNAL_SECRETS_ACCEPTED),
  health,
});
await serveProcess("storage", config, {
  handler: storage.app,
  logger,
  health,
  onClosed: async () => {
    await storage.stop();
    await bus.close();
    await db.close();
  },
});
