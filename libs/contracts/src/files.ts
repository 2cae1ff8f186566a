import { z } from "zod";
import { isoTimestamp, queryInt, uuid } from "./common.js";

/** Workspace file ids: `or_file_` plus an opaque suffix. */
export const workspaceFileId = z.string().regex(/^or_file_[A-Za-z0-9_-]+$/, "must be a file id (or_file_...)");

/** External providers whose file stores `/files` can front with the caller's own key. */
export const fileProvider = z.enum(["openai", "anthropic"]);
export type FileProvider = z.infer<typeof fileProvider>;

/** The spec's file record; `_shape` tells the SDK which of the three list shapes it is reading. */
export const workspaceFile = z.object({
  _shape: z.literal("openrouter"),
  id: workspaceFileId,
  filename: z.string(),
  mime_type: z.string(),
  size_bytes: z.number().int().min(0),
  created_at: isoTimestamp,
  downloadable: z.boolean(),
  type: z.literal("file"),
});
export type WorkspaceFile = z.infer<typeof workspaceFile>;

/** A file as OpenAI's Files API describes it, relayed when `provider=openai`. */
export const openAiFile = z.object({
  _shape: z.literal("openai"),
  id: z.string(),
  object: z.literal("file"),
  bytes: z.number().int().min(0),
  created_at: z.number().int().describe("Unix timestamp in seconds"),
  filename: z.string(),
  purpose: z.string(),
  status: z.literal("processed"),
});
export type OpenAiFile = z.infer<typeof openAiFile>;

/** A file as Anthropic's Files API describes it, relayed when `provider=anthropic`. */
export const anthropicFile = workspaceFile.extend({ _shape: z.literal("anthropic"), id: z.string() });
export type AnthropicFile = z.infer<typeof anthropicFile>;

const pageIds = {
  first_id: z.string().nullable(),
  last_id: z.string().nullable(),
  has_more: z.boolean(),
};

/** The shape the spec shows: the service's own storage. */
export const workspaceFileList = z.object({
  _shape: z.literal("openrouter"),
  data: z.array(workspaceFile),
  cursor: z.string().nullable().describe("Pass as `cursor` to fetch the next page; null on the last page"),
  ...pageIds,
});
export const openAiFileList = z.object({ _shape: z.literal("openai"), object: z.literal("list"), data: z.array(openAiFile), ...pageIds });
export const anthropicFileList = z.object({ _shape: z.literal("anthropic"), data: z.array(anthropicFile), ...pageIds });

/** `GET /files` 200: one of three shapes, negotiated by the `provider` query parameter. */
export const listFilesResponse = z.discriminatedUnion("_shape", [workspaceFileList, openAiFileList, anthropicFileList]);
export type ListFilesResponse = z.infer<typeof listFilesResponse>;

/** `GET /files` query; names follow OpenRouter's so its SDK's requests pass as sent. */
export const listFilesQuery = z
  .object({
    limit: queryInt(1, 1000).optional(),
    cursor: z.string().min(1).max(1024).optional(),
    workspace_id: uuid.optional(),
    provider: fileProvider.optional(),
    after: z.string().min(1).max(256).optional().describe("OpenAI-style forward cursor: list files after this id"),
    after_id: z.string().min(1).max(256).optional().describe("Anthropic-style forward cursor"),
    before_id: z.string().min(1).max(256).optional().describe("Anthropic-style reverse cursor (external providers only)"),
    order: z.enum(["asc", "desc"]).optional(),
  })
  .superRefine((query, ctx) => {
    // The service's own storage pages forward only; reverse paging exists only at the providers.
    if (query.provider) return;
    if (query.before_id !== undefined) {
      ctx.addIssue({ code: "custom", path: ["before_id"], message: "is not supported by the service's own storage" });
    }
    if (query.order === "desc") {
      ctx.addIssue({ code: "custom", path: ["order"], message: "only asc is supported by the service's own storage" });
    }
  });
export type ListFilesQuery = z.infer<typeof listFilesQuery>;

/** `GET /files/{file_id}`, its `/content` and `DELETE`: our `or_file_` ids, or a provider's own. */
export const fileParams = z.object({ file_id: z.string().min(1).max(256).regex(/^[A-Za-z0-9_.-]+$/, "must be a file id") });

/** Where one file lives: our storage, or a provider's with the workspace's own key (`provider=`). */
export const fileQuery = z.object({ provider: fileProvider.optional(), workspace_id: uuid.optional() });

/** `POST /files`: one `file` part, OpenAI's `purpose`, and with `provider=openai` its `expires_after`. */
export const uploadFileBody = z.object({
  file: z.string().describe("The file (binary part); its type is read from the bytes; not empty on our own storage").meta({ format: "binary" }),
  purpose: z
    .enum(["assistants", "batch", "fine-tune", "vision", "user_data", "evals"])
    .optional()
    .describe("OpenAI's purpose: sent to OpenAI with provider=openai (user_data when absent), refused with provider=anthropic"),
  "expires_after[anchor]": z.literal("created_at").optional().describe("provider=openai only: the expiry's anchor"),
  "expires_after[seconds]": z.string().optional().describe("provider=openai only: seconds after the anchor, 3600 to 2592000"),
});

/** `POST /files` and `GET /files/{file_id}` 200: the file, in the shape of the store that holds it. */
export const fileResponse = z.discriminatedUnion("_shape", [workspaceFile, openAiFile, anthropicFile]);

/** `DELETE /files/{file_id}` 200, in the shape of the store it was deleted from. */
export const deletedFile = z.discriminatedUnion("_shape", [
  z.object({ _shape: z.literal("openrouter"), id: z.string(), type: z.literal("file_deleted") }),
  z.object({ _shape: z.literal("openai"), id: z.string(), object: z.literal("file"), deleted: z.literal(true) }),
  z.object({ _shape: z.literal("anthropic"), id: z.string(), type: z.literal("file_deleted") }),
]);
export type DeletedFile = z.infer<typeof deletedFile>;
