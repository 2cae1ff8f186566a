import { Agent, FormData, request, type Dispatcher } from "undici";
import { currentTraceparent, jsonBody, textOf } from "@switchyard/runtime";
import { UpstreamError } from "./errors.js";

/**
 * One keep-alive pool per process for every upstream: connections are reused across requests, which
 * the global `fetch` does far less cheaply. Bodies stay streams, except the answer `postJsonAnswer` reads
 * whole for a caller that parses it whole in the end.
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

/** A call made within a traced provider attempt names the attempt's span (W3C `traceparent`); untraced, the headers as they are. */
function traceHeaders(headers: Record<string, string>): Record<string, string> {
  const traceparent = currentTraceparent();
  return traceparent ? { ...headers, traceparent } : headers;
}

/** No provider answered: another endpoint may be tried. */
const unreachableError = (provider: string, error: unknown) => new UpstreamError(`${provider} unreachable: ${(error as Error).message}`, null, true);

/** An error status as the `UpstreamError` that says whether another endpoint may be tried, and when. */
const statusError = (provider: string, status: number, text: string, headers: Record<string, string | string[] | undefined>) =>
  new UpstreamError(`${provider} answered ${status}: ${text.slice(0, 500)}`, status, retryable(status), retryAfterMs(headers["retry-after"]));

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
    res = await request(url, { method, dispatcher: agent, headers: traceHeaders(headers), ...(body !== undefined ? { body } : {}), signal });
  } catch (error) {
    if (signal.aborted) throw error;
    throw unreachableError(provider, error);
  }
  if (res.statusCode >= 400) throw statusError(provider, res.statusCode, await res.body.text().catch(() => ""), res.headers);
  return { status: res.statusCode, headers: res.headers, body: res.body };
}

/** POSTs upstream; see `send`. */
export const post = (provider: string, url: string, headers: Record<string, string>, body: UpstreamBody, signal: AbortSignal): Promise<UpstreamResponse> =>
  send(provider, "POST", url, headers, body, signal);

/** Where and what a JSON POST sends, less the signal: the first arguments of `postJson` and `postJsonAnswer`. */
export type JsonPost = readonly [provider: string, url: string, headers: Record<string, string>, body: unknown];

/** POSTs JSON upstream; see `post`. */
export const postJson = (provider: string, url: string, headers: Record<string, string>, body: unknown, signal: AbortSignal): Promise<UpstreamResponse> =>
  post(provider, url, { "content-type": "application/json", ...headers }, jsonBody(body), signal);

/**
 * POSTs JSON upstream and reads the whole answer as JSON: `undefined` when it is not JSON, or when the
 * connection dropped mid-answer (the caller then refuses it as not what it asked for). Failures as `send`.
 * For answers that are not streamed: the body goes from undici's dispatcher into one buffer, without the
 * body stream, promise and abort plumbing `request` builds, which is about a third of the client's CPU
 * per call.
 */
export const postJsonAnswer = (provider: string, url: string, headers: Record<string, string>, body: unknown, signal: AbortSignal): Promise<unknown> =>
  dispatchJson(provider, url, headers, body, signal, (chunks) => parsedText(textOf(chunks)));

/**
 * As `postJsonAnswer`, with the answer left as the chunks it came in: for a caller that reads a large answer
 * its own way (base64 embeddings, whose vectors need not pass through a UTF-8 decoder and `JSON.parse`).
 * They are not joined into one buffer: on Node 24 (not on 20 or 22) every large buffer counts towards the
 * external memory that starts V8's full collections, and a 130 KB answer joined, then written again as the
 * client's, brought one every 200 ms under load. Undefined when the connection dropped mid-answer.
 */
export const postJsonChunks = (provider: string, url: string, headers: Record<string, string>, body: unknown, signal: AbortSignal): Promise<Buffer[] | undefined> =>
  dispatchJson(provider, url, headers, body, signal, (chunks) => chunks);

/** JSON text parsed; undefined when it is not JSON. */
export function parsedText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The most endpoint URLs whose origin and path `targetOf` keeps; past it the kept ones are dropped and kept anew. */
const keptTargets = 512;
const targets = new Map<string, { origin: string; path: string }>();

/** A URL's origin and path with its query, as the dispatcher takes them: parsed once per URL, not per call. */
function targetOf(url: string): { origin: string; path: string } {
  let target = targets.get(url);
  if (target) return target;
  const parsed = new URL(url);
  target = { origin: parsed.origin, path: `${parsed.pathname}${parsed.search}` };
  if (targets.size >= keptTargets) targets.clear();
  targets.set(url, target);
  return target;
}

/** One JSON POST whose whole answer, as the chunks it came in, `read` turns into the result; undefined when the connection dropped mid-answer. */
function dispatchJson<T>(provider: string, url: string, headers: Record<string, string>, body: unknown, signal: AbortSignal, read: (chunks: Buffer[]) => T): Promise<T | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let status = 0;
    let answerHeaders: Record<string, string | string[] | undefined> = {};
    let controller: Dispatcher.DispatchController | undefined;
    const abort = () => controller?.abort(signal.reason as Error);
    const settled = () => signal.removeEventListener("abort", abort);
    const unreachable = (error: Error) => {
      settled();
      // As `send`: no provider answered; a caller's abort stays an abort.
      reject(signal.aborted ? error : unreachableError(provider, error));
    };
    if (signal.aborted) return reject(signal.reason);
    signal.addEventListener("abort", abort, { once: true });
    const { origin, path } = targetOf(url);
    const options = { origin, path, method: "POST" as const, headers: traceHeaders({ "content-type": "application/json", ...headers }), body: jsonBody(body) };
    try {
      agent.dispatch(options, {
        onRequestStart(started) {
          controller = started;
        },
        onResponseStart(_, statusCode, responseHeaders) {
          // 1xx answers are interim; the final status follows.
          if (statusCode < 200) return;
          status = statusCode;
          answerHeaders = responseHeaders;
        },
        onResponseData(_, chunk) {
          chunks.push(chunk);
        },
        onResponseEnd() {
          settled();
          if (status >= 400) return reject(statusError(provider, status, textOf(chunks), answerHeaders));
          resolve(read(chunks));
        },
        onResponseError(_, error) {
          if (status === 0) return unreachable(error);
          settled();
          if (status >= 400) return reject(statusError(provider, status, "", answerHeaders));
          resolve(undefined);
        },
      });
    } catch (error) {
      unreachable(error as Error);
    }
  });
}

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
