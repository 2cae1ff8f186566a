import { fileParams, fileQuery, type DeletedFile } from "@switchyard/contracts";
import { notFound, parseInput } from "@switchyard/runtime";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { RequestHandler, Response } from "express";
import type { StorageDeps } from "../deps.js";
import { ownerOf } from "../files/owner.js";
import { deleteRow, findFile, markDeleting, toWorkspaceFile } from "../files/records.js";
import { providerCall } from "../providers/call.js";

/** The caller, the file and where it lives; our own ids are `or_file_`, anything else is unknown here. */
async function target(deps: StorageDeps, req: Parameters<RequestHandler>[0], res: Response) {
  const { file_id: id } = parseInput(fileParams, req.params, "path");
  const { provider, workspace_id } = parseInput(fileQuery, req.query, "query");
  return { id, provider, owner: await ownerOf(deps, res, workspace_id) };
}

/** RFC 5987's value characters: encodeURIComponent's, less the `'`, `(`, `)` and `*` it leaves as they are. */
const extValue = (name: string) => encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** Disposition that survives every file name: ASCII fallback plus the RFC 5987 UTF-8 form. */
const disposition = (name: string) => `attachment; filename="${name.replace(/[^\x20-\x7e]|["\\]/g, "_")}"; filename*=UTF-8''${extValue(name)}`;

/** `GET /files/{id}`. */
export const getFileRoute =
  (deps: StorageDeps): RequestHandler =>
  async (req, res) => {
    const { id, provider, owner } = await target(deps, req, res);
    if (provider) {
      res.json(await providerCall(deps, owner, provider, res, (files, account, signal) => files.retrieve(id, account, signal)));
      return;
    }
    const row = await findFile(deps.db, owner, id);
    if (!row) throw notFound("File not found");
    res.json(toWorkspaceFile(row));
  };

/** `GET /files/{id}/content`: the bytes, streamed from the object store (or the provider) as they come. */
export const fileContentRoute =
  (deps: StorageDeps): RequestHandler =>
  async (req, res) => {
    const { id, provider, owner } = await target(deps, req, res);
    if (provider) {
      const content = await providerCall(deps, owner, provider, res, (files, account, signal) => files.content(id, account, signal));
      res.writeHead(200, { "content-type": "application/octet-stream", ...(content.contentLength !== undefined ? { "content-length": content.contentLength } : {}) });
      // At the client's pace: a provider's file may be hundreds of megabytes, and its client slow.
      await pipeline(Readable.from(content.body), res).catch((error: unknown) => {
        // A client that left is no failure; a provider that broke off mid-way is logged (the response was cut).
        if (!res.writableFinished && !req.destroyed) deps.logger.error({ err: error, id, provider }, "provider file body failed mid-way");
      });
      return;
    }
    const row = await findFile(deps.db, owner, id);
    const object = row && (await deps.objects.get(row.object_key));
    if (!row || !object) throw notFound("File not found");
    // Bytes as bytes, as OpenRouter serves them (its SDK reads only octet-stream here); the record has the type.
    res.writeHead(200, { "content-type": "application/octet-stream", "content-length": object.contentLength, "content-disposition": disposition(row.filename) });
    object.body.on("error", (error) => {
      deps.logger.error({ err: error, id }, "file body failed mid-way");
      res.destroy(error);
    });
    object.body.pipe(res);
  };

/** `DELETE /files/{id}`: hidden at once, its object removed, then its row (the sweeper finishes what fails). */
export const deleteFileRoute =
  (deps: StorageDeps): RequestHandler =>
  async (req, res) => {
    const { id, provider, owner } = await target(deps, req, res);
    if (provider) {
      await providerCall(deps, owner, provider, res, (files, account, signal) => files.remove(id, account, signal));
      const deleted: DeletedFile = provider === "openai" ? { _shape: "openai", id, object: "file", deleted: true } : { _shape: "anthropic", id, type: "file_deleted" };
      res.json(deleted);
      return;
    }
    const row = await markDeleting(deps.db, owner, id);
    if (!row) throw notFound("File not found");
    try {
      await deps.objects.delete(row.object_key);
      await deleteRow(deps.db, id);
    } catch (error) {
      deps.logger.warn({ err: error, id }, "file deletion left for the sweeper");
    }
    res.json({ _shape: "openrouter", id, type: "file_deleted" } satisfies DeletedFile);
  };
