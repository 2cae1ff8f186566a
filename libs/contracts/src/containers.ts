import { z } from "zod";
import { queryInt } from "./common.js";

/** `cfile_` + base64url(path): the id is derivable from the path, so listing needs no id table. */
export const containerFileId = z
  .string()
  .regex(/^cfile_[A-Za-z0-9_-]+$/, "must be a container file id (cfile_ followed by base64url)");

/**
 * The canonical id from bash/shell tool results, e.g. `sess_<sanitized key>` or, for a restarted
 * session, `sess_<key>-r<nonce>`.
 */
export const containerId = z
  .string()
  .min(1, "must not be empty")
  .max(256, "must be at most 256 characters")
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, "must be a container id");

export const containerFile = z.object({
  id: containerFileId,
  object: z.literal("container.file"),
  container_id: z.string(),
  path: z.string().describe("Container-relative path"),
  bytes: z.number().int().min(0),
  created_at: z.number().int().describe("Unix timestamp in seconds of the last sync"),
  source: z.literal("assistant"),
});
export type ContainerFile = z.infer<typeof containerFile>;

export const containerParams = z.object({ container_id: containerId });
export const containerFileParams = z.object({ container_id: containerId, file_id: containerFileId });

export const listContainerFilesQuery = z.object({
  limit: queryInt(1, 1000).default(100),
  after: containerFileId.optional().describe("Resume strictly after this file (usually the previous last_id)"),
});
export type ListContainerFilesQuery = z.infer<typeof listContainerFilesQuery>;

/** Lexicographic path order; `has_more` true always means `after=last_id` fetches the next page. */
export const listContainerFilesResponse = z.object({
  object: z.literal("list"),
  data: z.array(containerFile),
  first_id: z.string().nullable(),
  last_id: z.string().nullable(),
  has_more: z.boolean(),
});
export type ListContainerFilesResponse = z.infer<typeof listContainerFilesResponse>;
