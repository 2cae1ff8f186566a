import { containerFileParams, containerParams, listContainerFilesQuery } from "@switchyard/contracts";
import { badRequest, notFound, parseInput } from "@switchyard/runtime";
import type { RequestHandler } from "express";
import { findContainerFile, listContainerFiles, pathOfContainerFileId, toContainerFile } from "../containers/records.js";
import type { StorageDeps } from "../deps.js";
import { ownerOf } from "../files/owner.js";

function pathOf(id: string, where: string): string {
  const path = pathOfContainerFileId(id);
  if (path === undefined) throw badRequest(`Invalid ${where}: not a container file id (cfile_ + base64url of a path)`);
  return path;
}

/**
 * `GET /containers/{id}/files`: path order, `has_more` true exactly when `after=last_id` has more. A
 * container with nothing in the caller's workspace (empty, unknown, or another's) is an empty list: the
 * spec's list has no 404, and answering alike tells no one which names other workspaces use.
 */
export const listContainerFilesRoute =
  (deps: StorageDeps): RequestHandler =>
  async (req, res) => {
    const { container_id: containerId } = parseInput(containerParams, req.params, "path");
    const query = parseInput(listContainerFilesQuery, req.query, "query");
    const owner = await ownerOf(deps, res, undefined);
    const after = query.after === undefined ? undefined : pathOf(query.after, "query: after");
    const rows = await listContainerFiles(deps.db, owner, containerId, after, query.limit);
    const page = rows.slice(0, query.limit).map(toContainerFile);
    res.json({ object: "list", data: page, first_id: page[0]?.id ?? null, last_id: page.at(-1)?.id ?? null, has_more: rows.length > query.limit });
  };

/** `GET /containers/{id}/files/{file_id}/content`: the body, when the sandbox synced it along. */
export const containerFileContentRoute =
  (deps: StorageDeps): RequestHandler =>
  async (req, res) => {
    const { container_id: containerId, file_id: fileId } = parseInput(containerFileParams, req.params, "path");
    const row = await findContainerFile(deps.db, await ownerOf(deps, res, undefined), containerId, pathOf(fileId, "path: file_id"));
    const object = row?.object_key ? await deps.objects.get(row.object_key) : undefined;
    if (!row) throw notFound("Container file not found");
    if (!object) throw notFound("This file's content was not synced from its sandbox");
    res.writeHead(200, { "content-type": "application/octet-stream", "content-length": object.contentLength });
    object.body.on("error", (error) => res.destroy(error));
    object.body.pipe(res);
  };

/** `GET /containers/{id}/files/{file_id}`: metadata only. */
export const getContainerFileRoute =
  (deps: StorageDeps): RequestHandler =>
  async (req, res) => {
    const { container_id: containerId, file_id: fileId } = parseInput(containerFileParams, req.params, "path");
    const path = pathOf(fileId, "path: file_id");
    const row = await findContainerFile(deps.db, await ownerOf(deps, res, undefined), containerId, path);
    if (!row) throw notFound("Container file not found");
    res.json(toContainerFile(row));
  };
