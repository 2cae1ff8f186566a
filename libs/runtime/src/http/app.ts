import express, { type ErrorRequestHandler, type Express, type Request, type RequestHandler } from "express";
import type { Logger } from "../log.js";
import { serviceOf } from "../metrics.js";
import { badRequest, HttpError } from "./errors.js";
import { textProblem } from "./input-guard.js";
import { assignRequestId, countWhenDone, logWhenDone, isProbe, sendError } from "./request-basics.js";
import { requestIdHeader, withRequestId } from "./request-context.js";

export { requestIdHeader, withRequestId } from "./request-context.js";

export interface HttpAppOptions {
  logger: Logger;
  /** Largest JSON body accepted, in bytes; larger is a 413. */
  maxBodyBytes?: number;
  /** Skip the JSON body parser (the router forwards bodies untouched). */
  parseJson?: boolean;
  /** Log every request (default). Off behind an in-process router that logs each request already. */
  requestLogs?: boolean;
}

/**
 * Request ids come from the caller (or the router, or the service calling) when they look sane, else are
 * made here; internal calls made while handling the request carry it on, so every hop logs the same id.
 */
const requestId: RequestHandler = (req, res, next) => withRequestId(assignRequestId(req, res), next);

/**
 * Counts, times and logs every answer but the probes'. The route label is the matched route's pattern (or
 * what the router set in `res.locals.metricsRoute`), never the raw path.
 */
function observe(logger: Logger, service: string): RequestHandler {
  return (req, res, next) => {
    if (isProbe(req.path)) return next();
    logWhenDone(logger, req, res);
    countWhenDone(service, req, res, () =>
      String(res.locals.metricsRoute ?? (req.route as { path?: string } | undefined)?.path ?? (res.statusCode === 404 ? "unmatched" : "other")),
    );
    next();
  };
}

/**
 * Refuses a JSON body nested deeper than inputs may be, or holding an object of more fields than they may
 * have, from its bytes, before the parse: parsing a body a million levels deep, or validating an object of
 * 100,000 fields, takes up to a second of the event loop (see `textProblem`). Bodies in UTF-16 or UTF-32
 * are left to the check after the parse, whose bytes this scan does not read.
 */
const refuseTooDeep = (_req: unknown, _res: unknown, bytes: Buffer, encoding: string | null): void => {
  if (encoding !== null && encoding.toLowerCase().replace("-", "") !== "utf8") return;
  const problem = textProblem(bytes, "body");
  if (problem) throw badRequest(`Invalid body: ${problem}`);
};

/** An express app with request ids, request logs, metrics and the JSON parser every service uses. */
export function createHttpApp(options: HttpAppOptions): Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);
  app.use(requestId);
  // Behind an in-process router, that router logs and counts each request once for all services.
  if (options.requestLogs !== false) app.use(observe(options.logger, serviceOf(options.logger)));
  if (options.parseJson !== false) {
    app.use(express.json({ limit: options.maxBodyBytes ?? 10 * 1024 * 1024, strict: false, verify: refuseTooDeep }));
  }
  return app;
}

/**
 * The JSON body of an update, whose fields are all optional: `{}` when the request carried no body. The JSON
 * parser leaves a body of another type unread (curl's `-d` sends a form type), and reading that as an empty
 * update would answer 200 for a change never made, such as a key that was to be disabled.
 */
export function updateBody(req: Request): unknown {
  if (req.body !== undefined) return req.body;
  const length = req.headers["content-length"];
  const sent = req.headers["transfer-encoding"] !== undefined || (length !== undefined && length !== "0");
  if (sent) throw badRequest("Invalid body: send it as JSON with Content-Type: application/json");
  return {};
}

/** Ends the middleware chain: unknown paths are 404 and every error becomes the envelope. */
export function finishHttpApp(app: Express, logger: Logger): Express {
  app.use((req, _res, next) => next(new HttpError("not_found", `No route for ${req.method} ${req.path}`)));
  app.use(errorHandler(logger));
  return app;
}

/** The single error handler: renders `{ error: { code, message, metadata? } }` with `code` = status. */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (error: unknown, req, res, _next) => sendError(res, error, logger, req.headers[requestIdHeader]);
}
