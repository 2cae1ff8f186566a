import http, { type IncomingMessage, type ServerResponse } from "node:http";
import { streamErrorChunk } from "@switchyard/contracts";
import type { Logger } from "@switchyard/runtime";
import { createProxyMiddleware } from "http-proxy-middleware";
import { replicaPool } from "./replicas.js";

/** Where a service lives: other processes (one URL per replica) or this one (its request handler). */
export type Target = { kind: "url"; urls: string[] } | { kind: "handler"; handler: (req: IncomingMessage, res: ServerResponse) => void };

/** Hands a request to its service; it answers the client, whatever happens. */
export type Forwarder = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * Hands a request to its service without parsing or buffering it: bodies and streams pass through as
 * bytes, over a keep-alive pool when the service is another process, to its ready replicas in turn.
 */
export function forwardTo(name: string, target: Target, logger: Logger): Forwarder {
  if (target.kind === "handler") return target.handler;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 512, keepAliveMsecs: 10_000 });
  const replicas = replicaPool(name, target.urls, logger);
  const chosen = new WeakMap<IncomingMessage, string>();
  const proxy = createProxyMiddleware<IncomingMessage, ServerResponse>({
    target: target.urls[0],
    router: (req) => {
      const url = replicas.pick();
      chosen.set(req, url);
      return url;
    },
    agent,
    xfwd: true,
    // Express has already matched the full path; forward it as it came.
    pathFilter: () => true,
    on: {
      proxyRes: (proxyRes, _req, res) => {
        // A draining router asks clients to reconnect (elsewhere); the service's own keep-alive must not undo it.
        if (res.getHeader("connection") === "close") proxyRes.headers.connection = "close";
        if (!String(proxyRes.headers["content-type"] ?? "").startsWith("text/event-stream")) return;
        // The service died mid-stream (a crash, SIGKILL): the client still gets the stream's in-band error.
        proxyRes.once("close", () => {
          if (proxyRes.complete || res.writableEnded || res.destroyed) return;
          logger.warn({ service: name, generationId: proxyRes.headers["x-generation-id"] }, "service went away mid-stream");
          const id = proxyRes.headers["x-generation-id"];
          const chunk = streamErrorChunk(typeof id === "string" ? id : null, undefined, 502, "The service answering this stream went away; the request may be retried");
          res.end(`data: ${JSON.stringify(chunk)}\n\n`);
        });
      },
      error: (error, req, res) => {
        const replica = chosen.get(req);
        if ((error as NodeJS.ErrnoException).code === "ECONNREFUSED" && replica) replicas.failed(replica);
        logger.warn({ err: error, service: name, replica }, "service unreachable");
        if (!("writeHead" in res)) return;
        if (res.headersSent) {
          res.end();
          return;
        }
        res.writeHead(503, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { code: 503, message: "Service temporarily unavailable" } }));
      },
    },
  });
  // A failure before the request left (the replica pick, the proxy's own options) is the caller's 503.
  const unavailable = (res: ServerResponse) => (error?: unknown) => {
    if (error) logger.warn({ err: error, service: name }, "could not forward");
    if (res.headersSent) return void res.end();
    res.writeHead(503, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: { code: 503, message: "Service temporarily unavailable" } }));
  };
  return (req, res) => void proxy(req, res, unavailable(res));
}
