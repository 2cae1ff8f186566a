import { randomUUID } from "node:crypto";
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "../log.js";
import { metrics } from "../metrics.js";
import { badRequest, carriesRetryAfter, defaultRetryAfterSeconds, HttpError } from "./errors.js";
import { ServiceUnavailableError } from "./internal-client.js";
import { joinedBytes } from "./chunk-text.js";
import { textProblem } from "./input-guard.js";
import { parseJsonBytes } from "./large-json.js";
import { currentNote, requestIdHeader, withRequestId } from "./request-context.js";
import { noteRoute } from "../tracing/spans.js";

/**
 * What every request gets, express or not: an id, a log line, its count and time, and failures rendered as
 * the error envelope. Plain `node:http` so a hot route can skip the framework and still behave the same.
 */

const saneId = /^[\w.:-]{1,128}$/;

/** The probes' paths: neither logged, counted nor traced. */
const probes: ReadonlySet<string> = new Set(["/healthz", "/readyz", "/metrics"]);

/** Whether a path is a probe's, its letters' case aside, as express routes it. */
export const isProbe = (path: string): boolean => probes.has(path.toLowerCase());

/** The path of a request's URL, without its query. */
export const pathOf = (url: string | undefined): string => {
  const raw = url ?? "/";
  const query = raw.indexOf("?");
  return query < 0 ? raw : raw.slice(0, query);
};

/** The path of a POST as express matches routes: case-insensitive, with or without a trailing slash; empty for other methods. */
export const postedPath = (req: IncomingMessage): string => (req.method === "POST" ? pathOf(req.url).toLowerCase().replace(/(.)\/$/, "$1") : "");

/** A header's value when it came once; a header sent several times reads as absent. */
export const headerOf = (headers: IncomingHttpHeaders, name: string): string | undefined => {
  const value = headers[name];
  return typeof value === "string" ? value : undefined;
};

/** The hostname a request arrived on, as the client saw it (the router forwards it in X-Forwarded-Host): lower-case, without a port. */
export const requestHost = (headers: IncomingHttpHeaders): string =>
  (headerOf(headers, "x-forwarded-host") ?? headerOf(headers, "host") ?? "").split(",")[0]!.trim().toLowerCase().replace(/:\d+$/, "");

/**
 * The request's id: the caller's (or the router's, or the calling service's) when it looks sane, else a new
 * one. Written back on the request for the next hop and echoed in `X-Request-Id`.
 */
export function assignRequestId(req: IncomingMessage, res: ServerResponse): string {
  const given = req.headers[requestIdHeader];
  const id = typeof given === "string" && saneId.test(given) ? given : randomUUID();
  req.headers[requestIdHeader] = id;
  res.setHeader("X-Request-Id", id);
  return id;
}

/**
 * One line per request once it ends, at info (a 5xx at error), with what the request's note says: the key
 * (a hash prefix), and for a generation its model, provider, tokens, cost and id. Called within the
 * request's scope (`withRequestId`), whose note it reads when the answer ends. No child logger per request:
 * the line is built only when its level is enabled.
 */
export function logWhenDone(logger: Logger, req: IncomingMessage, res: ServerResponse): void {
  const started = performance.now();
  // The path only: a query may carry a credential (Gemini's `?key=`), which logs never keep.
  const url = pathOf(req.url);
  const note = currentNote();
  res.once("close", () => {
    const aborted = !res.writableFinished;
    const level = res.statusCode >= 500 ? "error" : "info";
    if (!logger.isLevelEnabled(level)) return;
    logger[level](
      {
        reqId: req.headers[requestIdHeader],
        req: { method: req.method, url },
        res: { statusCode: res.statusCode },
        ...note,
        responseTime: Math.round(performance.now() - started),
      },
      aborted ? "request aborted" : "request completed",
    );
  });
}

/**
 * Counts and times the answer. The route label is a route's pattern, never the raw path, so ids do not
 * multiply the series; it is asked for at the end, once the route is known.
 */
export function countWhenDone(service: string, req: IncomingMessage, res: ServerResponse, route: () => string): void {
  const started = performance.now();
  res.once("close", () => {
    const method = req.method ?? "GET";
    const path = route();
    // Literals, not one spread into the other: a spread was the dearest part of counting a request.
    metrics.httpRequests.inc({ service, method, route: path, status: String(res.writableFinished ? res.statusCode : 499) });
    metrics.httpDuration.observe({ service, method, route: path }, (performance.now() - started) / 1000);
  });
}

export interface PlainRouteOptions {
  logger: Logger;
  /** The metrics' service label and route pattern. */
  service: string;
  route: string;
  /** Log and count the request here (off behind an in-process router that does it for all services). */
  observe: boolean;
  /** How an error is answered, where the route's clients read another shape than `{ error: { code, message } }`. */
  sendError?: typeof sendError;
}

/**
 * Serves a request outside express the way an express route is served: its id (and request context), its
 * log line and metrics, and every failure answered with the error envelope.
 */
export function servePlain(req: IncomingMessage, res: ServerResponse, options: PlainRouteOptions, handle: () => Promise<void>): void {
  const id = assignRequestId(req, res);
  if (options.observe) countWhenDone(options.service, req, res, () => options.route);
  withRequestId(id, () => {
    noteRoute(req.method, options.route);
    if (options.observe) logWhenDone(options.logger, req, res);
    handle().catch((error: unknown) => (options.sendError ?? sendError)(res, error, options.logger, id));
  });
}

/** body-parser's errors: `http-errors` with a `type`, or a 4xx wrapped around what failed (`expose` set). */
interface BodyParserError {
  type?: string;
  status?: number;
  expose?: boolean;
  code?: unknown;
}

const isBodyParserError = (error: unknown): error is BodyParserError =>
  typeof error === "object" &&
  error !== null &&
  (typeof (error as BodyParserError).type === "string" || ((error as BodyParserError).expose === true && typeof (error as BodyParserError).status === "number"));

/** zlib's and brotli's decoding errors (`Z_DATA_ERROR`, `Z_BUF_ERROR`, `ERR__ERROR_FORMAT_PADDING_1`...). */
const isDecodingError = (error: BodyParserError) => typeof error.code === "string" && /^(Z_|ERR__ERROR|ERR_BROTLI)/.test(error.code);

/** The status, message and metadata an error is answered with; what the client must not see is logged. */
export function describeError(error: unknown, logger: Logger, reqId: unknown, res: ServerResponse) {
  if (error instanceof HttpError) {
    for (const [name, value] of Object.entries(error.headers ?? {})) res.setHeader(name, value);
    // A 5xx that says why (its cause) is logged with it: the client hears only the envelope. A 500 is a bug.
    if (error.status >= 500 && error.cause) logger[error.status === 500 ? "error" : "warn"]({ err: error.cause, reqId }, error.message);
    return { status: error.status, message: error.message, metadata: error.metadata };
  }
  if (error instanceof ServiceUnavailableError) {
    // Another service could not answer (restarting, overloaded): the caller may try again.
    logger.warn({ err: error, reqId }, "a service this request needs is unavailable");
    return { status: 503, message: "A service this request needs is unavailable right now; try again shortly" };
  }
  if (isBodyParserError(error) && error.type === "entity.too.large") return { status: 413, message: "Request payload too large" };
  if (isBodyParserError(error) && error.type === "entity.parse.failed") return { status: 400, message: "Invalid JSON body" };
  if (isBodyParserError(error) && isDecodingError(error)) {
    return { status: 400, message: "Invalid request body: it could not be decoded as its Content-Encoding says" };
  }
  if (isBodyParserError(error) && error.status && error.status < 500) return { status: error.status, message: "Invalid request body" };
  logger.error({ err: error, reqId }, "unhandled error");
  return { status: 500, message: "Internal server error" };
}

/**
 * Answers with `{ error: { code, message, metadata? } }`, `code` = status; a response already started just ends.
 * An answer given before the request's body was read whole (too large, a bad key) closes the connection:
 * the rest of the body would otherwise be read as the next request, or left unread so that the next request
 * on the connection waits forever.
 */
export function sendError(res: ServerResponse, error: unknown, logger: Logger, reqId: unknown): void {
  const { status, message, metadata } = describeError(error, logger, reqId, res);
  if (res.headersSent) {
    res.end();
    return;
  }
  setErrorHeaders(res, status);
  sendJson(res, status, { error: { code: status, message, ...(metadata ? { metadata } : {}) } });
}

/** What every error answer carries, whatever its body's shape: when to retry, and no unread body left behind. */
export function setErrorHeaders(res: ServerResponse, status: number): void {
  if (carriesRetryAfter(status) && !res.hasHeader("retry-after")) res.setHeader("Retry-After", String(defaultRetryAfterSeconds));
  if (!res.req.complete) res.setHeader("Connection", "close");
}

/** A JSON answer with its length, as express's `res.json` sends it. */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.statusCode = status;
  res.setHeader("Content-Type", "application/json; charset=utf-8");
  res.setHeader("Content-Length", Buffer.byteLength(text));
  res.end(text);
}

/**
 * Whether a route that skips express can read this request's body itself: JSON in UTF-8 without a content
 * encoding, as nearly every client sends it. Other bodies (gzip, another charset) are left to express.
 */
export function readsAsPlainJson(req: IncomingMessage): boolean {
  const encoding = req.headers["content-encoding"];
  if (encoding !== undefined && encoding.toLowerCase() !== "identity") return false;
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(req.headers["content-type"] ?? "")?.[1]?.toLowerCase();
  return charset === undefined || charset === "utf-8" || charset === "utf8";
}

const isJson = (req: IncomingMessage) => /^application\/json\s*(;|$)/i.test(req.headers["content-type"] ?? "");
const hasBody = (req: IncomingMessage) => req.headers["transfer-encoding"] !== undefined || (req.headers["content-length"] ?? "0") !== "0";

/**
 * The body as `express.json({ strict: false })` gives it: undefined without a body or when it is not
 * JSON, `{}` for an empty one; too large is a 413 and bad JSON a 400, in the same envelope. JSON nested
 * deeper than inputs may be, or with an object wider, is the 400 `parseInput` would give, told from the
 * bytes before they are parsed.
 */
export async function readJsonBody(req: IncomingMessage, limit: number): Promise<unknown> {
  if (!hasBody(req) || !isJson(req)) return undefined;
  const tooLarge = () => new HttpError("payload_too_large", "Request payload too large");
  if (Number(req.headers["content-length"] ?? 0) > limit) throw tooLarge();
  // Read with listeners, not an iterator: leaving an iterator early destroys the socket, and the client
  // would never see its 413.
  const { chunks, size } = await new Promise<{ chunks: Buffer[]; size: number }>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (error?: Error) => {
      req.off("data", onData).off("end", onEnd).off("error", done);
      if (error) {
        req.pause();
        reject(error);
      } else resolve({ chunks, size });
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) return done(tooLarge());
      chunks.push(chunk);
    };
    const onEnd = () => done();
    req.on("data", onData).on("end", onEnd).on("error", done);
  });
  if (size === 0) return {};
  const bytes = joinedBytes(chunks);
  // Nested too deep or too wide is told from the bytes, at once: the parse and the walk after it would take up to a second.
  const problem = textProblem(bytes, "body");
  if (problem) throw badRequest(`Invalid body: ${problem}`);
  try {
    return parseJsonBytes(bytes);
  } catch {
    throw new HttpError("bad_request", "Invalid JSON body");
  }
}
