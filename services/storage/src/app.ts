import { createHttpApp, finishHttpApp, mountHealth, requireCaller, requireService } from "@switchyard/runtime";
import type { Express } from "express";
import type { StorageDeps } from "./deps.js";
import { containerFileContentRoute, getContainerFileRoute, listContainerFilesRoute } from "./routes/containers.js";
import { deleteFileRoute, fileContentRoute, getFileRoute } from "./routes/file.js";
import { listFilesRoute, uploadFileRoute } from "./routes/files.js";
import { readContentRoute, saveContentRoute } from "./routes/internal-content.js";
import { syncContainerFilesRoute } from "./routes/internal-sync.js";

/** Storage's HTTP surface: workspace files, sandbox container files, and the sandboxes' sync route. */
export function createApp(deps: StorageDeps): Express {
  const app = createHttpApp({ logger: deps.logger, maxBodyBytes: 64 * 1024 * 1024, requestLogs: deps.requestLogs });
  mountHealth(app, deps.readiness, deps.health);
  const caller = requireCaller(deps.verifyCaller);
  app.get("/api/v1/files", caller, listFilesRoute(deps));
  app.post("/api/v1/files", caller, uploadFileRoute(deps));
  app.get("/api/v1/files/:file_id", caller, getFileRoute(deps));
  app.get("/api/v1/files/:file_id/content", caller, fileContentRoute(deps));
  app.delete("/api/v1/files/:file_id", caller, deleteFileRoute(deps));
  app.get("/api/v1/containers/:container_id/files", caller, listContainerFilesRoute(deps));
  app.get("/api/v1/containers/:container_id/files/:file_id", caller, getContainerFileRoute(deps));
  app.get("/api/v1/containers/:container_id/files/:file_id/content", caller, containerFileContentRoute(deps));
  app.post("/internal/containers/:container_id/files", requireService(deps.verifyService), syncContainerFilesRoute(deps));
  app.post("/internal/generation-content", requireService(deps.verifyService), saveContentRoute(deps));
  app.post("/internal/generation-content/read", requireService(deps.verifyService), readContentRoute(deps));
  return finishHttpApp(app, deps.logger);
}
