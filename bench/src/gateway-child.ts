import { createCallerSigner, createLogger, serve } from "@switchyard/runtime";
import { loadStandaloneConfig, startStandalone } from "@switchyard/standalone";
import { benchConfig } from "./config.js";

/**
 * The gateway under measurement, in its own process so its CPU time is its own: standalone on one port,
 * and identity's app alone on a second port (what a request costs without the router in front).
 */
const secret = "bench-internal-secret-0123456789abcdef0123456789";
const bootstrapKey = "bench-bootstrap-management-key-0123456789abcdef";
const config = loadStandaloneConfig({
  ...benchConfig.gatewayEnv,
  PORT: "0",
  LOG_LEVEL: benchConfig.logLevel,
  SWITCHYARD_INTERNAL_SECRET: secret,
  SWITCHYARD_BOOTSTRAP_KEY: bootstrapKey,
  RATE_LIMIT_PER_MINUTE: "100000000",
});
const logger = createLogger({ service: "bench", level: config.LOG_LEVEL });
const standalone = await startStandalone(config, logger);
const health = { draining: false };
const direct = await serve({ handler: standalone.identity.app, port: 0, host: "127.0.0.1", logger, health, drainTimeoutMs: 1000 });
const me = await (await fetch(`http://127.0.0.1:${standalone.port}/api/v1/key`, { headers: { authorization: `Bearer ${bootstrapKey}` } })).json() as {
  data: { hash: string; organization_id: string; workspace_id: string };
};
const callerHeader = await createCallerSigner(secret, 3600)({
  keyHash: me.data.hash,
  organizationId: me.data.organization_id,
  workspaceId: me.data.workspace_id,
  management: true,
});

process.on("message", (message: unknown) => {
  if (message === "cpu") process.send?.({ cpu: process.cpuUsage(), rss: process.memoryUsage().rss });
  if (message === "stop") void Promise.all([standalone.stop(), direct.drain()]).then(() => process.exit(0));
});
process.send?.({ ready: true, routerPort: standalone.port, directPort: direct.port, bootstrapKey, callerHeader });
