import { createHttpApp, finishHttpApp, mountHealth, requireService } from "@switchyard/runtime";
import type { Express } from "express";
import type { SandboxDeps } from "./deps.js";
import { execRoute } from "./routes/exec.js";

/** The sandbox service answers only other services: it runs commands for inference's agent loop. */
export function createApp(deps: SandboxDeps): Express {
  const app = createHttpApp({ logger: deps.logger, maxBodyBytes: 1024 * 1024, requestLogs: deps.requestLogs });
  mountHealth(app, deps.readiness, deps.health);
  app.post("/internal/sandbox/exec", requireService(deps.verifyService), execRoute(deps));
  return finishHttpApp(app, deps.logger);
}
