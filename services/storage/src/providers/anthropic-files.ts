import type { AnthropicFile } from "@switchyard/contracts";
import { FormData } from "@switchyard/upstream";
import { z } from "zod";
import { callJson, content, fileUrl, query } from "./shared.js";
import type { ProviderAccount, ProviderFiles } from "./types.js";

const file = z.looseObject({
  id: z.string(),
  filename: z.string(),
  mime_type: z.string(),
  size_bytes: z.number().int().min(0),
  created_at: z.string(),
  downloadable: z.boolean().nullish(),
});
const page = z.looseObject({ data: z.array(file), first_id: z.string().nullish(), last_id: z.string().nullish(), has_more: z.boolean().nullish() });
const deleted = z.looseObject({ id: z.string() });

/** The Files API is a beta: every call names it. */
const headers = (account: ProviderAccount) => ({ "x-api-key": account.apiKey, "anthropic-version": "2023-06-01", "anthropic-beta": "files-api-2025-04-14" });

const toFile = (f: z.infer<typeof file>): AnthropicFile => ({
  _shape: "anthropic",
  id: f.id,
  filename: f.filename,
  mime_type: f.mime_type,
  size_bytes: f.size_bytes,
  created_at: f.created_at,
  downloadable: f.downloadable ?? false,
  type: "file",
});

/** Anthropic's Files API (beta), answered in its own shape. It lists newest first and has no `order`. */
export const anthropicFiles: ProviderFiles<AnthropicFile> = {
  async upload(input, account, signal) {
    const form = new FormData();
    form.append("file", new Blob([input.bytes], { type: input.mimeType }), input.filename);
    return toFile(await callJson("anthropic", "POST", fileUrl(account), headers(account), form, file, signal));
  },
  async list(input, account, signal) {
    const url = fileUrl(account) + query({ limit: input.limit, after_id: input.after, before_id: input.before });
    const answer = await callJson("anthropic", "GET", url, headers(account), undefined, page, signal);
    const data = answer.data.map(toFile);
    return { data, first_id: answer.first_id ?? data[0]?.id ?? null, last_id: answer.last_id ?? data.at(-1)?.id ?? null, has_more: answer.has_more ?? false };
  },
  async retrieve(id, account, signal) {
    return toFile(await callJson("anthropic", "GET", fileUrl(account, id), headers(account), undefined, file, signal));
  },
  content: (id, account, signal) => content("anthropic", fileUrl(account, id, "/content"), headers(account), signal),
  async remove(id, account, signal) {
    await callJson("anthropic", "DELETE", fileUrl(account, id), headers(account), undefined, deleted, signal);
  },
};
