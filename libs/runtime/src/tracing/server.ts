import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import { pathOf, isProbe } from "../http/request-basics.js";
import { openScope, Span, type Tracer } from "./spans.js";
import { parseTraceparent, traceparentHeader, tracestateHeader } from "./traceparent.js";

/**
 * A service's request handler with a SERVER span per request (probes aside), child of the caller's
 * `traceparent` (a malformed one starts a new trace). The request's `traceparent` header is then rewritten to
 * name this span, so whatever passes the request on (the router to its service, over HTTP or in-process)
 * makes the next hop its child; `tracestate` passes on untouched. Without a tracer the handler is returned
 * as it is: tracing off costs nothing.
 */
export function traced(tracer: Tracer | undefined, handler: RequestListener): RequestListener {
  if (!tracer) return handler;
  return (req: IncomingMessage, res: ServerResponse) => {
    const path = pathOf(req.url);
    if (isProbe(path)) return handler(req, res);
    const method = req.method ?? "GET";
    const state = req.headers[tracestateHeader];
    const span = new Span(tracer, method, "server", parseTraceparent(req.headers[traceparentHeader]), typeof state === "string" ? state : undefined);
    span.set("http.request.method", method).set("url.path", path);
    req.headers[traceparentHeader] = span.traceparent;
    let close = () => {};
    res.once("close", () => {
      const route = (req as { route?: { path?: unknown } }).route?.path;
      if (typeof route === "string" && !span.has("http.route")) span.set("http.route", route).rename(`${method} ${route}`);
      const status = res.writableFinished ? res.statusCode : undefined;
      span.set("http.response.status_code", status);
      close();
      span.end(status === undefined ? "the client went away before the answer ended" : status >= 500 ? String(status) : undefined);
    });
    ({ close } = openScope(span, () => handler(req, res)));
  };
}
