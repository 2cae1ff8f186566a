import { randomUUID } from "node:crypto";
import express, { type ErrorRequestHandler, type Express, type RequestHandler } from "express";
import type { Logger } from "../log.js";
import { metrics, serviceOf } from "../metrics.js";
import { HttpError } from "./errors.js";
import { ServiceUnavailableError } from "./internal-client.js";
import { requestIdHeader, withRequestId } from "./request-context.js";

export { requestIdHeader } from "./request-context.js";

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
const requestId: RequestHandler = (req, res, next) => {
  const given = req.headers[requestIdHeader];
  const id = typeof given === "string" && /^[\w.:-]{1,128}$/.test(given) ? given : randomUUID();
  req.headers[requestIdHeader] = id;
  res.setHeader("X-Request-Id", id);
  withRequestId(id, next);
};

const quietPaths = new Set(["/healthz", "/readyz", "/metrics"]);

/**
 * One line per request once it ends (errors and client errors at once, successes at debug). No child
 * logger per request: the line is built only when its level is enabled, which keeps it off the hot path.
 */
function requestLogs(logger: Logger): RequestHandler {
  return (req, res, next) => {
    if (quietPaths.has(req.path)) return next();
    const started = performance.now();
    res.once("close", () => {
      const aborted = !res.writableFinished;
      const level = res.statusCode >= 500 ? "error" : res.statusCode >= 400 || aborted ? "info" : "debug";
      if (!logger.isLevelEnabled(level)) return;
      logger[level](
        {
          reqId: req.headers[requestIdHeader],
          req: { method: req.method, url: req.originalUrl },
          res: { statusCode: res.statusCode },
          responseTime: Math.round(performance.now() - started),
        },
        aborted ? "request aborted" : "request completed",
      );
    });
    next();
  };
}

/**
 * Counts and times every answer. The route label is the matched route's pattern (or what the router set
 * in `res.locals.metricsRoute`), never the raw path, so ids do not multiply the series.
 */
function requestMetrics(service: string): RequestHandler {
  return (req, res, next) => {
    if (quietPaths.has(req.path)) return next();
    const started = performance.now();
    res.once("close", () => {
      const route = String(res.locals.metricsRoute ?? (req.route as { path?: string } | undefined)?.path ?? (res.statusCode === 404 ? "unmatched" : "other"));
      metrics.httpRequests.inc({ service, method: req.method, route, status: String(res.writableFinished ? res.statusCode : 499) });
      metrics.httpDuration.observe({ service, method: req.method, route }, (performance.now() - started) / 1000);
    });
    next();
  };
}

/** An express app with request ids, request logs, metrics and the JSON parser every service uses. */
export function createHttpApp(options: HttpAppOptions): Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);
  app.use(requestId);
  if (options.requestLogs !== false) {
    app.use(requestLogs(options.logger));
    // Behind an in-process router, that router counts each request once for all services.
    app.use(requestMetrics(serviceOf(options.logger)));
  }
  if (options.parseJson !== false) {
    app.use(express.json({ limit: options.maxBodyBytes ?? 10 * 1024 * 1024, strict: false }));
  }
  return app;
}

/** Ends the middleware chain: unknown paths are 404 and every error becomes the envelope. */
export function finishHttpApp(app: Express, logger: Logger): Express {
  app.use((req, _res, next) => next(new HttpError("not_found", `No route for ${req.method} ${req.path}`)));
  app.use(errorHandler(logger));
  return app;
}

interface BodyParserError {
  type: string;
  status?: number;
}

const isBodyParserError = (error: unknown): error is BodyParserError =>
  typeof error === "object" && error !== null && typeof (error as { type?: unknown }).type === "string";

/** The single error handler: renders `{ error: { code, message, metadata? } }` with `code` = status. */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (error: unknown, req, res, _next) => {
    let status = 500;
    let message = "Internal server error";
    let metadata: Record<string, unknown> | undefined;
    if (error instanceof HttpError) {
      status = error.status;
      message = error.message;
      metadata = error.metadata;
      for (const [name, value] of Object.entries(error.headers ?? {})) res.setHeader(name, value);
      // A 5xx that says why (its cause) is logged with it: the client hears only the envelope.
      if (status >= 500 && error.cause) logger.warn({ err: error.cause, reqId: req.headers[requestIdHeader] }, message);
    } else if (error instanceof ServiceUnavailableError) {
      // Another service could not answer (restarting, overloaded): the caller may try again.
      status = 503;
      message = "A service this request needs is unavailable right now; try again shortly";
      logger.warn({ err: error, reqId: req.headers[requestIdHeader] }, "a service this request needs is unavailable");
    } else if (isBodyParserError(error) && error.type === "entity.too.large") {
      status = 413;
      message = "Request payload too large";
    } else if (isBodyParserError(error) && error.type === "entity.parse.failed") {
      status = 400;
      message = "Invalid JSON body";
    } else if (isBodyParserError(error) && error.status && error.status < 500) {
      status = error.status;
      message = "Invalid request body";
    } else {
      logger.error({ err: error, reqId: req.headers[requestIdHeader] }, "unhandled error");
    }
    if (res.headersSent) {
      res.end();
      return;
    }
    res.status(status).json({ error: { code: status, message, ...(metadata ? { metadata } : {}) } });
  };
}
