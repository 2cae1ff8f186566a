import type { OpenAiFile } from "@switchyard/contracts";
import { FormData, UpstreamError } from "@switchyard/upstream";
import { z } from "zod";
import { callJson, content, fileUrl, query } from "./shared.js";
import type { ProviderAccount, ProviderFiles } from "./types.js";

const file = z.looseObject({ id: z.string(), bytes: z.number().int().min(0), created_at: z.number().int(), filename: z.string(), purpose: z.string() });
const page = z.looseObject({ data: z.array(file), first_id: z.string().nullish(), last_id: z.string().nullish(), has_more: z.boolean().nullish() });
const deleted = z.looseObject({ id: z.string(), deleted: z.boolean() });

const auth = (account: ProviderAccount) => ({ authorization: `Bearer ${account.apiKey}` });

/** Our contract says `processed`: a file OpenAI lists is one it accepted, whatever stage its checks are at. */
const toFile = (f: z.infer<typeof file>): OpenAiFile => ({
  _shape: "openai",
  id: f.id,
  object: "file",
  bytes: f.bytes,
  created_at: f.created_at,
  filename: f.filename,
  purpose: f.purpose,
  status: "processed",
});

/** OpenAI's Files API, answered in its own shape. */
export const openAiFiles: ProviderFiles<OpenAiFile> = {
  async upload(input, account, signal) {
    const form = new FormData();
    form.append("purpose", input.purpose ?? "user_data");
    if (input.expiresAfter) {
      form.append("expires_after[anchor]", input.expiresAfter.anchor);
      form.append("expires_after[seconds]", String(input.expiresAfter.seconds));
    }
    form.append("file", new Blob([input.bytes], { type: input.mimeType }), input.filename);
    return toFile(await callJson("openai", "POST", fileUrl(account), auth(account), form, file, signal));
  },
  async list(input, account, signal) {
    if (input.before !== undefined) throw new UpstreamError("openai's Files API has no reverse cursor (before_id)", 400, false);
    const answer = await callJson("openai", "GET", fileUrl(account) + query({ limit: input.limit, after: input.after, order: input.order }), auth(account), undefined, page, signal);
    const data = answer.data.map(toFile);
    return { data, first_id: answer.first_id ?? data[0]?.id ?? null, last_id: answer.last_id ?? data.at(-1)?.id ?? null, has_more: answer.has_more ?? false };
  },
  async retrieve(id, account, signal) {
    return toFile(await callJson("openai", "GET", fileUrl(account, id), auth(account), undefined, file, signal));
  },
  content: (id, account, signal) => content("openai", fileUrl(account, id, "/content"), auth(account), signal),
  async remove(id, account, signal) {
    const answer = await callJson("openai", "DELETE", fileUrl(account, id), auth(account), undefined, deleted, signal);
    if (!answer.deleted) throw new UpstreamError(`openai did not delete ${id}`, 502, false);
  },
};
