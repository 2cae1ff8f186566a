import { createServer, type RequestListener, type Server } from "node:http";
import { Server as NetServer, type AddressInfo, type Socket } from "node:net";
import type { TracingConfig } from "../config.js";
import type { Logger } from "../log.js";
import { createTracing } from "../tracing/setup.js";
import { traced } from "../tracing/server.js";
import type { HealthState } from "./health.js";

export interface ServeOptions {
  handler: RequestListener;
  port: number;
  host: string;
  logger: Logger;
  health: HealthState;
  drainTimeoutMs: number;
  /** How long a client may take to send a request's headers before its connection is closed (408). */
  headersTimeoutMs?: number;
  /** How long readiness fails before the listener closes. */
  drainDelayMs?: number;
  /** Closes what the process opened (bus, database) after the last request has finished. */
  onClosed?: () => Promise<void>;
}

export interface RunningServer {
  server: Server;
  port: number;
  /** Stop accepting, finish in-flight requests and streams, close dependencies. */
  drain(): Promise<void>;
}

/** How long a request's headers may take unless configured (`HEADERS_TIMEOUT_MS`). */
export const defaultHeadersTimeoutMs = 10_000;

export async function serve(options: ServeOptions): Promise<RunningServer> {
  const { logger, health } = options;
  const graceMs = options.drainDelayMs ?? 0;
  // With a drain delay: each connection's requests in progress, and since when it has had none (for `drain`).
  const connections = new Map<Socket, { inFlight: number; idleSince: number }>();
  const onRequest: RequestListener = (req, res) => {
    const connection = graceMs ? connections.get(req.socket) : undefined;
    if (connection) {
      connection.inFlight += 1;
      res.once("close", () => {
        if (--connection.inFlight === 0) connection.idleSince = Date.now();
      });
    }
    // Tell keep-alive clients to reconnect elsewhere once draining has begun.
    if (health.draining) res.setHeader("Connection", "close");
    options.handler(req, res);
  };
  // A connection that sends half a request and waits holds a socket and a parser: it is closed (408) once its
  // headers are this late. Node looks for late ones every `connectionsCheckingInterval` (30 s unless set),
  // which is why the old 66 s limit closed them after about 90 s.
  const headersTimeout = options.headersTimeoutMs ?? defaultHeadersTimeoutMs;
  const server = createServer({ headersTimeout, connectionsCheckingInterval: 1_000 }, onRequest);
  if (graceMs) {
    server.on("connection", (socket: Socket) => {
      connections.set(socket, { inFlight: 0, idleSince: Date.now() });
      socket.once("close", () => connections.delete(socket));
    });
  }
  // Longer than common load balancer idle timeouts, so the balancer closes idle sockets first. (An idle
  // keep-alive connection is not waiting for headers: the headers timeout starts with a request's first byte.)
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  let draining: Promise<void> | undefined;
  const drain = () => {
    draining ??= (async () => {
      health.draining = true;
      if (graceMs) {
        logger.info({ delayMs: graceMs }, "draining: not ready, still accepting while balancers notice");
        await new Promise((resolve) => setTimeout(resolve, graceMs));
      }
      logger.info("draining: no new connections, finishing in-flight requests");
      // Without a drain delay, keep-alive connections close as soon as they are idle. With one, only once
      // they have been idle that long: clients drop idle connections sooner (the draining rule of docs/operations.md),
      // and an answer begun before the drain (so without `Connection: close`) may end during it, after which
      // its client can still send one more request on that connection, answered with `Connection: close`.
      // Closing it under that request would fail it. (`http.Server.close` closes every idle connection at
      // once, hence the listener is closed as a `net.Server`.)
      const closed = new Promise<void>((resolve) => (graceMs ? NetServer.prototype.close.call(server, () => resolve()) : server.close(() => resolve())));
      const closeIdle = () => {
        if (!graceMs) return server.closeIdleConnections();
        const now = Date.now();
        for (const [socket, { inFlight, idleSince }] of connections) if (inFlight === 0 && now - idleSince >= graceMs) socket.destroy();
      };
      closeIdle();
      const sweep = setInterval(closeIdle, 50);
      const timer = setTimeout(() => {
        logger.warn({ timeoutMs: options.drainTimeoutMs }, "drain timeout reached, closing remaining connections");
        server.closeAllConnections();
      }, options.drainTimeoutMs);
      timer.unref();
      await closed;
      clearTimeout(timer);
      clearInterval(sweep);
      await options.onClosed?.();
      logger.info("drained");
    })();
    return draining;
  };
  return { server, port, drain };
}

/** The variables every process listens with. */
export interface ListenConfig {
  PORT: number;
  HOST: string;
  DRAIN_TIMEOUT_MS: number;
  DRAIN_DELAY_MS?: number;
  HEADERS_TIMEOUT_MS?: number;
}

/**
 * A process entry point's server: listens as configured, with a SERVER span per request when traces are
 * exported (`OTEL_*`; the spans still queued are sent once it has drained), and drains on SIGTERM or
 * SIGINT, then exits.
 */
export async function serveProcess(
  name: string,
  config: ListenConfig & TracingConfig,
  options: Pick<ServeOptions, "handler" | "logger" | "health" | "onClosed">,
): Promise<RunningServer> {
  const tracing = createTracing(config, options.logger);
  const onClosed = async () => {
    await options.onClosed?.();
    await tracing?.stop();
  };
  const running = await serve({ ...options, handler: traced(tracing?.tracer(name), options.handler), onClosed, port: config.PORT, host: config.HOST, drainTimeoutMs: config.DRAIN_TIMEOUT_MS, drainDelayMs: config.DRAIN_DELAY_MS ?? 0, headersTimeoutMs: config.HEADERS_TIMEOUT_MS });
  options.logger.info({ port: running.port, url: `http://${config.HOST}:${running.port}` }, `${name} listening`);
  exitOnSignals(running, options.logger);
  return running;
}

/** Drains on SIGTERM or SIGINT, then exits. */
export function exitOnSignals(running: RunningServer, logger: Logger): void {
  const onSignal = (signal: NodeJS.Signals) => {
    logger.info({ signal }, "shutting down");
    running.drain().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, "error while draining");
        process.exit(1);
      },
    );
  };
  process.once("SIGTERM", onSignal);
  process.once("SIGINT", onSignal);
}
