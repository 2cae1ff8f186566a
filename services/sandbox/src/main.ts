import { createInternalClient, createLogger, createServiceSigner, createServiceVerifier, openBackends, serveProcess, exitOnConfigError } from "@switchyard/runtime";
import { z } from "zod";
import { loadSandboxConfig } from "./config.js";
import { startSandbox } from "./start.js";

/** The sandbox service as its own process. */
exitOnConfigError();
const config = loadSandboxConfig();
const logger = createLogger({ service: "sandbox", level: config.LOG_LEVEL, format: config.LOG_FORMAT });
const secret = config.SWITCHYARD_INTERNAL_SECRET;
if (!secret) {
  logger.fatal("SWITCHYARD_INTERNAL_SECRET is required when the sandbox runs as its own process");
  process.exit(1);
}
const { db, bus } = await openBackends(config, logger, "sandbox");
// Bodies of up to 16 MiB go to storage in one call.
const storage = createInternalClient(config.STORAGE_URL, createServiceSigner(secret, "sandbox"), 120_000);
const synced = z.object({ synced: z.number() });
const health = { draining: false };
const sandbox = await startSandbox({
  db,
  logger,
  async reportFiles(containerId, body) {
    const answer = await storage.post(`/internal/containers/${encodeURIComponent(containerId)}/files`, body, synced);
    if (!answer) throw new Error("storage has no container file sync route");
    return answer.synced;
  },
  config,
  verifyService: createServiceVerifier(secret, config.SWITCHYARD_INTERNAL_SECRETS_ACCEPTED),
  health,
});
await serveProcess("sandbox", config, {
  handler: sandbox.app,
  logger,
  health,
  onClosed: async () => {
    await sandbox.stop();
    await bus.close();
    await db.close();
  },
});
