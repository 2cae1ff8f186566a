import { createHttpApp, finishHttpApp, mountHealth, requireCaller, requireService } from "@switchyard/runtime";
import { endpointStatsEntries } from "@switchyard/upstream";
import type { Express } from "express";
import type { MediaDeps } from "./deps.js";
import { findGenerationRoute } from "./routes/generations.js";
import { imagesRoute } from "./routes/images.js";
import { speechRoute } from "./routes/speech.js";
import { transcriptionsRoute } from "./routes/transcriptions.js";

/** Media's HTTP surface: transcription, image generation and speech, and its generations for inference. */
export function createApp(deps: MediaDeps): Express {
  const app = createHttpApp({ logger: deps.logger, maxBodyBytes: deps.maxBodyBytes, requestLogs: deps.requestLogs });
  mountHealth(app, deps.readiness, deps.health);
  app.post("/internal/generations/find", requireService(deps.verifyService), findGenerationRoute(deps));
  app.post("/internal/endpoint-stats", requireService(deps.verifyService), (_req, res) => void res.json({ data: endpointStatsEntries(deps.stats) }));
  const caller = requireCaller(deps.verifyCaller);
  app.post("/api/v1/audio/transcriptions", caller, transcriptionsRoute(deps));
  app.post("/api/v1/images", caller, imagesRoute(deps));
  // Where the openai SDK's `images.generate` posts: the same operation.
  app.post("/api/v1/images/generations", caller, imagesRoute(deps));
  app.post("/api/v1/audio/speech", caller, speechRoute(deps));
  return finishHttpApp(app, deps.logger);
}
