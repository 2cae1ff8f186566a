import { badRequest, headerOf } from "@switchyard/runtime";
import type { IncomingHttpHeaders } from "node:http";

export const cacheHeader = "x-openrouter-cache";
export const cacheTtlHeader = "x-openrouter-cache-ttl";
export const cacheStatusHeader = "X-OpenRouter-Cache-Status";
export const cacheTtlResponseHeader = "X-OpenRouter-Cache-TTL";

/** OpenRouter's default lifetime of a cached answer, in seconds. */
export const defaultTtlSeconds = 300;

/**
 * What a request asked of the response cache: nothing (undefined) unless `X-OpenRouter-Cache: true`, and then
 * for how long (`X-OpenRouter-Cache-TTL`, whole seconds from 1 to the operator's maximum). A value that is
 * neither is refused with 400 rather than guessed at.
 */
export function cacheRequest(headers: IncomingHttpHeaders, maxTtlSeconds: number): { ttlSeconds: number } | undefined {
  const flag = headerOf(headers, cacheHeader);
  if (flag === undefined) return undefined;
  const on = flag.trim().toLowerCase();
  if (on === "false") return undefined;
  if (on !== "true") throw badRequest(`Invalid header: X-OpenRouter-Cache: must be true or false`);
  const ttl = headerOf(headers, cacheTtlHeader)?.trim();
  if (ttl === undefined) return { ttlSeconds: Math.min(defaultTtlSeconds, maxTtlSeconds) };
  const seconds = /^\d{1,9}$/.test(ttl) ? Number(ttl) : NaN;
  if (!Number.isInteger(seconds) || seconds < 1 || seconds > maxTtlSeconds) {
    throw badRequest(`Invalid header: X-OpenRouter-Cache-TTL: must be a whole number of seconds from 1 to ${maxTtlSeconds}`);
  }
  return { ttlSeconds: seconds };
}
