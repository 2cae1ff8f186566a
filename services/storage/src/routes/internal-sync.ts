import type { RequestHandler } from "express";
import { syncContainerFiles } from "../containers/sync.js";
import type { StorageDeps } from "../deps.js";

/** `POST /internal/containers/{id}/files`, for sandboxes in other processes. */
export const syncContainerFilesRoute =
  (deps: StorageDeps): RequestHandler =>
  async (req, res) => {
    const containerId = String(req.params.container_id);
    res.json({ container_id: containerId, synced: await syncContainerFiles(deps, containerId, req.body) });
  };
