import http, { type IncomingHttpHeaders, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from "node:http";
import { streamErrorChunk } from "@switchyard/contracts";
import { defaultRetryAfterSeconds, type Logger } from "@switchyard/runtime";
import { replicaPool } from "./replicas.js";
import { bodyPlan, readBody, type RequestBody } from "./request-body.js";
import { serviceAgent } from "./service-agent.js";

/** Where a service lives: other processes (one URL per replica) or this one (its request handler). */
export type Target =
  | {
      kind: "url";
      urls: string[];
      /** Largest JSON body kept in memory so that the request can be sent again; 1 MiB unless given. */
      replayBodyBytes?: number;
    }
  | { kind: "handler"; handler: (req: IncomingMessage, res: ServerResponse) => void };

/** Hands a request to its service; it answers the client, whatever happens. */
export type Forwarder = (req: IncomingMessage, res: ServerResponse) => void;

const defaultReplayBodyBytes = 1_048_576;

/**
 * Headers of one hop (RFC 9110 §7.6.1), never passed on in either direction: each side of the router has its
 * own connection. `expect` was already answered by this server. Node writes its own framing and keep-alive.
 */
const hopByHop = new Set(["connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade", "expect"]);

/** The header names a `Connection` header lists, which are hop-by-hop too. */
const listedIn = (connection: string | undefined): Set<string> =>
  connection ? new Set(connection.toLowerCase().split(",").map((token) => token.trim())) : new Set();

function endToEnd(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  const listed = listedIn(headers.connection);
  const kept: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !hopByHop.has(name) && !listed.has(name)) kept[name] = value;
  }
  return kept;
}

/**
 * The framing of what the router sends on its shared connection, its own: the body's length (buffered, or
 * the length the client's parser checked), chunked otherwise, nothing without a body. A client's framing
 * headers, dropped or named in its `Connection` header, must never leave a body unframed: the service would
 * read it as the next request on that connection, past the router's checks, under another caller's header.
 */
function framing(req: IncomingMessage, body: RequestBody): OutgoingHttpHeaders {
  if (body.kind === "none") return {};
  if (body.kind === "buffered") return { "content-length": body.bytes.length };
  const length = req.headers["content-length"];
  return req.headers["transfer-encoding"] === undefined && length !== undefined ? { "content-length": length } : { "transfer-encoding": "chunked" };
}

/** The request's headers for the service, with who called, on which port and scheme, and the host asked for. */
function forwardedHeaders(req: IncomingMessage, body: RequestBody): OutgoingHttpHeaders {
  const headers = endToEnd(req.headers);
  delete headers["content-length"];
  Object.assign(headers, framing(req, body));
  const encrypted = (req.socket as { encrypted?: boolean }).encrypted === true;
  const port = /:(\d+)$/.exec(req.headers.host ?? "")?.[1] ?? (encrypted ? "443" : "80");
  const values = { for: req.socket.remoteAddress ?? "", port, proto: encrypted ? "https" : "http" };
  for (const [key, value] of Object.entries(values)) {
    const previous = req.headers[`x-forwarded-${key}`];
    headers[`x-forwarded-${key}`] = previous ? `${String(previous)},${value}` : value;
  }
  headers["x-forwarded-host"] ??= req.headers.host ?? "";
  return headers;
}

/**
 * Hands a request to its service without parsing it: bodies and streams pass through as bytes, over a
 * keep-alive pool when the service is another process, to its ready replicas in turn.
 *
 * A request that gets no answer at all (the connection was refused, or dropped before the first byte of a
 * response) is sent once more: to another replica when there are several URLs, else on a new connection
 * (one URL is a Kubernetes Service, whose next connection may reach another pod). Nothing came back, so the
 * client has seen nothing, and most such failures never reached a service: a replica that stopped
 * listening, or a keep-alive socket it closed as the request left. It can also be a replica that died
 * (SIGKILL, out of memory) while handling the request, which then runs twice; for a chat completion the
 * first run was never recorded or charged. Only a body the router still has can go again: none, or JSON
 * read into memory first (see `bodyPlan`); a streamed upload that fails is answered 503.
 */
export function forwardTo(name: string, target: Target, logger: Logger): Forwarder {
  if (target.kind === "handler") return target.handler;
  const pool = serviceAgent();
  const replicas = replicaPool(name, target.urls, logger);
  const parsed = new Map(target.urls.map((url) => [url, new URL(url)]));
  const replayLimit = target.replayBodyBytes ?? defaultReplayBodyBytes;

  const unavailable = (res: ServerResponse) => {
    if (res.headersSent) return void res.destroy();
    res.writeHead(503, { "content-type": "application/json", "retry-after": String(defaultRetryAfterSeconds) });
    res.end(JSON.stringify({ error: { code: 503, message: "Service temporarily unavailable" } }));
  };

  /** The service's answer, as it comes; a service that dies mid-stream still ends the client's stream properly. */
  const relay = (upstream: IncomingMessage, res: ServerResponse, origin: string) => {
    // A replica that says close is draining: its other idle sockets are about to close as well.
    if (listedIn(upstream.headers.connection).has("close")) pool.closing(origin);
    // Failures mid-answer are handled on close.
    upstream.on("error", () => undefined);
    // The service answered before the client finished sending (a 413 for a chunked body over the limit):
    // the rest of that body cannot be told from a next request, so the client's connection ends here.
    if (!res.req.complete) res.setHeader("connection", "close");
    res.writeHead(upstream.statusCode ?? 502, endToEnd(upstream.headers));
    const streamed = String(upstream.headers["content-type"] ?? "").startsWith("text/event-stream");
    upstream.once("close", () => {
      if (upstream.complete || res.writableEnded || res.destroyed) return;
      if (!streamed) return void res.destroy();
      // The service died mid-stream (a crash, SIGKILL): the client still gets the stream's in-band error.
      const id = upstream.headers["x-generation-id"];
      logger.warn({ service: name, generationId: id }, "service went away mid-stream");
      const chunk = streamErrorChunk(typeof id === "string" ? id : null, undefined, 502, "The service answering this stream went away; the request may be retried");
      res.end(`data: ${JSON.stringify(chunk)}\n\n`);
    });
    upstream.pipe(res);
  };

  const send = (req: IncomingMessage, res: ServerResponse, body: RequestBody, attempt: number, failedOn?: string) => {
    const replica = replicas.pick(failedOn);
    const url = parsed.get(replica)!;
    const origin = url.host;
    // A second try takes a new connection: the pool's other sockets to that replica may be just as stale.
    const upstream = http.request({
      host: url.hostname,
      port: url.port,
      method: req.method,
      path: req.url,
      headers: forwardedHeaders(req, body),
      agent: attempt === 0 ? pool.agent : false,
    });
    if (attempt === 0) pool.track(upstream, origin);
    let answered = false;
    let abandoned = false;
    // A client that went away takes its request with it: the service sees the abort (and stops its provider call).
    res.once("close", () => {
      if (res.writableFinished) return;
      abandoned = true;
      upstream.destroy();
    });
    upstream.once("response", (answer) => {
      answered = true;
      try {
        relay(answer, res, origin);
      } catch (error) {
        // A header Node will not write (a service bug): the client's connection ends rather than the router.
        logger.error({ err: error, service: name, replica }, "could not relay the service's answer");
        answer.destroy();
        res.destroy();
      }
    });
    upstream.on("error", (error: NodeJS.ErrnoException) => {
      if (answered || abandoned) return;
      if (error.code === "ECONNREFUSED") replicas.failed(replica);
      if (upstream.reusedSocket) pool.closing(origin);
      if (attempt === 0 && body.kind !== "stream") {
        logger.info({ err: error, service: name, replica, reused: upstream.reusedSocket }, "no answer from the service; request sent again");
        return send(req, res, body, 1, replica);
      }
      logger.warn({ err: error, service: name, replica }, "service unreachable");
      unavailable(res);
    });
    if (body.kind === "buffered") upstream.end(body.bytes);
    else if (body.kind === "none") upstream.end();
    else {
      req.once("error", () => upstream.destroy());
      req.pipe(upstream);
    }
  };

  return (req, res) => {
    try {
      const plan = bodyPlan(req, replayLimit);
      if (plan !== "buffer") return send(req, res, { kind: plan }, 0);
      readBody(req)
        .then((bytes) => bytes && send(req, res, { kind: "buffered", bytes }, 0))
        .catch((error: unknown) => {
          logger.warn({ err: error, service: name }, "could not forward");
          unavailable(res);
        });
    } catch (error) {
      logger.warn({ err: error, service: name }, "could not forward");
      unavailable(res);
    }
  };
}
