import { writeFile } from "node:fs/promises";
import { Session } from "node:inspector/promises";
import { createCallerSigner, createLogger, serve } from "@switchyard/runtime";
import { loadStandaloneConfig, startStandalone } from "@switchyard/standalone";
import { stopWithParent } from "./cleanup.js";
import { benchConfig } from "./config.js";

/**
 * The gateway under measurement, in its own process so its CPU time is its own: standalone on one port,
 * and identity's app alone on a second port (what a request costs without the router in front).
 * The parent drives it by IPC: `cpu` (its CPU time and RSS), `{ profile: "start" | "stop" }` (a CPU profile
 * of the phases the parent measures, startup excluded), `stop`.
 */
const secret = "bench-internal-secret-0123456789abcdef0123456789";
const bootstrapKey = "bench-bootstrap-management-key-0123456789abcdef";
const config = loadStandaloneConfig({
  ...benchConfig.baseEnv,
  PORT: "0",
  LOG_LEVEL: benchConfig.logLevel,
  SWITCHYARD_INTERNAL_SECRET: secret,
  SWITCHYARD_BOOTSTRAP_KEY: bootstrapKey,
  RATE_LIMIT_PER_MINUTE: "100000000",
});
// As `npm start` does: each service names itself on its lines.
const logger = createLogger({ level: config.LOG_LEVEL, format: config.LOG_FORMAT });
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

let stopping = false;
function shutdown() {
  if (stopping) return;
  stopping = true;
  void Promise.all([standalone.stop(), direct.drain()]).finally(() => process.exit(0));
}

let profiler: Session | undefined;

async function onProfile(request: { profile: "start" | "stop"; path?: string }) {
  if (request.profile === "start") {
    profiler = new Session();
    profiler.connect();
    await profiler.post("Profiler.enable");
    await profiler.post("Profiler.start");
    process.send?.({ profiling: true });
    return;
  }
  if (!profiler || !request.path) throw new Error("profile stop without a running profile or a path");
  const { profile } = await profiler.post("Profiler.stop");
  profiler.disconnect();
  profiler = undefined;
  await writeFile(request.path, JSON.stringify(profile));
  process.send?.({ profiled: request.path });
}

process.on("message", (message: unknown) => {
  if (message === "cpu") {
    const memory = process.memoryUsage();
    process.send?.({ cpu: process.cpuUsage(), rss: memory.rss, heapUsed: memory.heapUsed });
  }
  if (typeof message === "object" && message !== null && "profile" in message) {
    onProfile(message as { profile: "start" | "stop"; path?: string }).catch((error: unknown) => {
      logger.error({ err: error }, "bench profiler failed");
      process.exit(1);
    });
  }
});
stopWithParent(shutdown);
process.send?.({ ready: true, routerPort: standalone.port, directPort: direct.port, bootstrapKey, callerHeader });
