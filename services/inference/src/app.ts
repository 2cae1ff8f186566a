import { createHttpApp, finishHttpApp, mountHealth, requireCaller } from "@switchyard/runtime";
import type { Express } from "express";
import type { InferenceDeps } from "./deps.js";
import { chatCompletionsRoute } from "./routes/chat-completions.js";
import { generationRoute } from "./routes/generation.js";

/** Inference's HTTP surface: chat completions and the generation records they leave. */
export function createApp(deps: InferenceDeps): Express {
  const app = createHttpApp({ logger: deps.logger, maxBodyBytes: deps.maxBodyBytes, requestLogs: deps.requestLogs });
  mountHealth(app, deps.readiness, deps.health);
  const caller = requireCaller(deps.verifyCaller);
  app.post("/api/v1/chat/completions", caller, chatCompletionsRoute(deps));
  app.get("/api/v1/generation", caller, generationRoute(deps));
  return finishHttpApp(app, deps.logger);
}
