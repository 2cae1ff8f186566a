import { Agent, FormData, request } from "undici";
import { UpstreamError } from "./errors.js";

/**
 * One keep-alive pool per process for every upstream: connections are reused across requests, which
 * the global `fetch` does far less cheaply. Bodies stay streams; nothing is buffered here.
 */
const agent = new Agent({ keepAliveTimeout: 30_000, connections: 256, pipelining: 1 });

export interface UpstreamResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: AsyncIterable<Uint8Array> & { text(): Promise<string>; json(): Promise<unknown> };
}

const retryable = (status: number) => status === 408 || status === 429 || status >= 500;

function retryAfterMs(header: string | string[] | undefined): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

/** What an upstream call may send: JSON text, raw bytes (audio), or a multipart form (undici's `FormData`, exported here; it sets the boundary). */
export { FormData };
export type UpstreamBody = string | Uint8Array | FormData;

/**
 * Calls an upstream. A connection failure or an error status becomes an `UpstreamError` that says whether
 * another endpoint may be tried; an abort by the caller is rethrown as it is.
 */
export async function send(
  provider: string,
  method: "GET" | "POST" | "DELETE",
  url: string,
  headers: Record<string, string>,
  body: UpstreamBody | undefined,
  signal: AbortSignal,
): Promise<UpstreamResponse> {
  let res;
  try {
    res = await request(url, { method, dispatcher: agent, headers, ...(body !== undefined ? { body } : {}), signal });
  } catch (error) {
    if (signal.aborted) throw error;
    throw new UpstreamError(`${provider} unreachable: ${(error as Error).message}`, null, true);
  }
  if (res.statusCode >= 400) {
    const text = (await res.body.text().catch(() => "")).slice(0, 500);
    throw new UpstreamError(`${provider} answered ${res.statusCode}: ${text}`, res.statusCode, retryable(res.statusCode), retryAfterMs(res.headers["retry-after"]));
  }
  return { status: res.statusCode, headers: res.headers, body: res.body };
}

/** POSTs upstream; see `send`. */
export const post = (provider: string, url: string, headers: Record<string, string>, body: UpstreamBody, signal: AbortSignal): Promise<UpstreamResponse> =>
  send(provider, "POST", url, headers, body, signal);

/** POSTs JSON upstream; see `post`. */
export const postJson = (provider: string, url: string, headers: Record<string, string>, body: unknown, signal: AbortSignal): Promise<UpstreamResponse> =>
  post(provider, url, { "content-type": "application/json", ...headers }, JSON.stringify(body), signal);

/** Reads the whole answer; a caller's abort stays an abort, a connection dropped mid-body may be retried elsewhere. */
export async function readAnswer(provider: string, res: UpstreamResponse, signal: AbortSignal): Promise<unknown> {
  let text: string;
  try {
    text = await res.body.text();
  } catch (error) {
    if (signal.aborted) throw error;
    throw new UpstreamError(`${provider} dropped the connection mid-answer: ${(error as Error).message}`, 502, true);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
