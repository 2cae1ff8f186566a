import { fileQuery, listFilesQuery, workspaceFileId, type ListFilesQuery } from "@switchyard/contracts";
import { badRequest, HttpError, notFound, parseInput, readMultipart } from "@switchyard/runtime";
import type { RequestHandler } from "express";
import { z } from "zod";
import type { StorageDeps } from "../deps.js";
import { decodeCursor, encodeCursor } from "../files/cursor.js";
import { ownerOf } from "../files/owner.js";
import { deleteRow, insertUpload, listFiles, markReady, newFileId, seqOf, toWorkspaceFile, type Owner } from "../files/records.js";
import { hasControlCharacters, sniffType } from "../files/sniff.js";
import { uploadFields } from "../files/upload-fields.js";
import { providerCall } from "../providers/call.js";

const filename = z.string().min(1).max(255).refine((name) => !/[/\\]/.test(name) && !hasControlCharacters(name), "must be a plain file name");

/** Where a listing of our own storage starts: one of the three cursor styles, never two. */
async function startAfter(deps: StorageDeps, owner: Owner, query: ListFilesQuery): Promise<string | undefined> {
  const given = [query.cursor, query.after, query.after_id].filter((c) => c !== undefined);
  if (given.length > 1) throw badRequest("Invalid query: use one of cursor, after and after_id");
  if (query.cursor !== undefined) return decodeCursor(query.cursor);
  const id = query.after ?? query.after_id;
  if (id === undefined) return undefined;
  if (!workspaceFileId.safeParse(id).success) throw badRequest(`Invalid query: ${query.after ? "after" : "after_id"}: must be a file id (or_file_...)`);
  const seq = await seqOf(deps.db, owner, id);
  if (seq === undefined) throw badRequest(`Invalid query: no file ${id} to list after`);
  return seq;
}

/** `GET /files`: our storage in upload order, or the provider's own listing with `provider=`. */
export const listFilesRoute =
  (deps: StorageDeps): RequestHandler =>
  async (req, res) => {
    const query = parseInput(listFilesQuery, req.query, "query");
    const owner = await ownerOf(deps, res, query.workspace_id);
    const limit = query.limit ?? 100;
    if (query.provider) {
      if (query.provider === "anthropic" && query.order === "asc") throw badRequest("Invalid query: order: Anthropic's Files API lists newest first; asc is not supported");
      const page = await providerCall(deps, owner, query.provider, res, (files, account, signal) =>
        files.list({ limit, after: query.after ?? query.after_id, before: query.before_id, order: query.order }, account, signal),
      );
      res.json(query.provider === "openai" ? { _shape: "openai", object: "list", ...page } : { _shape: "anthropic", ...page });
      return;
    }
    const rows = await listFiles(deps.db, owner, await startAfter(deps, owner, query), limit);
    const page = rows.slice(0, limit);
    const hasMore = rows.length > limit;
    res.json({
      _shape: "openrouter",
      data: page.map(toWorkspaceFile),
      cursor: hasMore ? encodeCursor(page.at(-1)!.seq) : null,
      first_id: page[0]?.id ?? null,
      last_id: page.at(-1)?.id ?? null,
      has_more: hasMore,
    });
  };

/**
 * `POST /files`: multipart with one `file` part (and `purpose` for OpenAI). The type is read from the
 * bytes; the row is written before the object and marked ready after it, so a crash leaves an orphan the
 * sweeper removes, never a listed file without its body.
 */
export const uploadFileRoute =
  (deps: StorageDeps): RequestHandler =>
  async (req, res) => {
    const query = parseInput(fileQuery, req.query, "query");
    const owner = await ownerOf(deps, res, query.workspace_id);
    if (!(req.headers["content-type"] ?? "").toLowerCase().startsWith("multipart/form-data")) {
      throw badRequest("Send the file as multipart/form-data with a file part");
    }
    const upload = await readMultipart(req, deps.maxFileBytes);
    if (!upload.file) throw badRequest("Invalid body: file: a file part is required");
    const name = parseInput(filename, upload.file.filename ?? "", "body.file filename");
    const { purpose, expiresAfter } = uploadFields(upload.fields, query.provider);
    const mimeType = sniffType(upload.file.bytes, name);
    if (query.provider) {
      const bytes = upload.file.bytes;
      const file = await providerCall(deps, owner, query.provider, res, (files, account, signal) =>
        files.upload({ bytes, filename: name, mimeType, purpose, expiresAfter }, account, signal),
      );
      res.status(200).json(file);
      return;
    }
    // As OpenRouter's own storage: an empty file is refused.
    if (upload.file.bytes.length === 0) throw badRequest("Invalid body: file: the file is empty");
    const id = newFileId();
    const objectKey = `files/${owner.workspaceId}/${id}`;
    await insertUpload(deps.db, owner, { id, filename: name, mimeType, size: upload.file.bytes.length, objectKey });
    try {
      await deps.objects.put(objectKey, upload.file.bytes, mimeType);
    } catch (error) {
      deps.logger.error({ err: error, id }, "file body could not be stored");
      await deps.objects.delete(objectKey).catch(() => undefined);
      await deleteRow(deps.db, id).catch(() => undefined);
      throw new HttpError("unavailable", "File storage is unavailable; try again shortly");
    }
    const ready = await markReady(deps.db, id);
    if (!ready) {
      // Its row was taken while the body was written (its workspace deleted, with its files): the body goes too.
      await deps.objects.delete(objectKey).catch((error: unknown) => deps.logger.warn({ err: error, id }, "could not delete the body of an upload whose workspace was deleted"));
      await deleteRow(deps.db, id).catch(() => undefined);
      throw notFound("Workspace not found");
    }
    res.status(200).json(toWorkspaceFile(ready));
  };
