import { readAnswer, send, UpstreamError, type UpstreamBody } from "@switchyard/upstream";
import type { z } from "zod";
import type { ProviderAccount, ProviderContent } from "./types.js";

/** One call to a provider's Files API whose JSON answer must match `schema`. */
export async function callJson<T extends z.ZodType>(
  provider: string,
  method: "GET" | "POST" | "DELETE",
  url: string,
  headers: Record<string, string>,
  body: UpstreamBody | undefined,
  schema: T,
  signal: AbortSignal,
): Promise<z.infer<T>> {
  const res = await send(provider, method, url, headers, body, signal);
  const parsed = schema.safeParse(await readAnswer(provider, res, signal));
  if (!parsed.success) throw new UpstreamError(`${provider} sent a response that is not a file`, 502, true);
  return parsed.data;
}

/** A file's bytes as the provider streams them. */
export async function content(provider: string, url: string, headers: Record<string, string>, signal: AbortSignal): Promise<ProviderContent> {
  const res = await send(provider, "GET", url, headers, undefined, signal);
  const length = Number(res.headers["content-length"]);
  const type = res.headers["content-type"];
  return { body: res.body, contentType: typeof type === "string" ? type : "application/octet-stream", contentLength: Number.isFinite(length) ? length : undefined };
}

export const fileUrl = (account: ProviderAccount, id?: string, suffix = "") =>
  `${account.baseUrl.replace(/\/$/, "")}/files${id === undefined ? "" : `/${encodeURIComponent(id)}`}${suffix}`;

/** A query string of the parameters that are set. */
export function query(params: Record<string, string | number | undefined>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== undefined) search.set(name, String(value));
  const text = search.toString();
  return text ? `?${text}` : "";
}
