import { createServer, type RequestListener, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Logger } from "../log.js";
import type { HealthState } from "./health.js";

export interface ServeOptions {
  handler: RequestListener;
  port: number;
  host: string;
  logger: Logger;
  health: HealthState;
  drainTimeoutMs: number;
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

export async function serve(options: ServeOptions): Promise<RunningServer> {
  const { logger, health } = options;
  const server = createServer((req, res) => {
    // Tell keep-alive clients to reconnect elsewhere once draining has begun.
    if (health.draining) res.setHeader("Connection", "close");
    options.handler(req, res);
  });
  // Longer than common load balancer idle timeouts, so the balancer closes idle sockets first.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  let draining: Promise<void> | undefined;
  const drain = () => {
    draining ??= (async () => {
      health.draining = true;
      if (options.drainDelayMs) {
        logger.info({ delayMs: options.drainDelayMs }, "draining: not ready, still accepting while balancers notice");
        await new Promise((resolve) => setTimeout(resolve, options.drainDelayMs));
      }
      logger.info("draining: no new connections, finishing in-flight requests");
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Keep-alive sockets become idle as their last response ends; close each as soon as it does. After a
      // drain delay, a connection accepted just before the listener closed gets a moment to send its
      // request first, rather than being closed under a client that is already writing to it.
      let sweep: NodeJS.Timeout | undefined;
      const startSweep = () => {
        server.closeIdleConnections();
        sweep = setInterval(() => server.closeIdleConnections(), 50);
      };
      const sweepDelay = options.drainDelayMs ? setTimeout(startSweep, 500) : undefined;
      if (!sweepDelay) startSweep();
      const timer = setTimeout(() => {
        logger.warn({ timeoutMs: options.drainTimeoutMs }, "drain timeout reached, closing remaining connections");
        server.closeAllConnections();
      }, options.drainTimeoutMs);
      timer.unref();
      await closed;
      clearTimeout(timer);
      clearTimeout(sweepDelay);
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
}

/** A process entry point's server: listens as configured and drains on SIGTERM or SIGINT, then exits. */
export async function serveProcess(
  name: string,
  config: ListenConfig,
  options: Pick<ServeOptions, "handler" | "logger" | "health" | "onClosed">,
): Promise<RunningServer> {
  const running = await serve({ ...options, port: config.PORT, host: config.HOST, drainTimeoutMs: config.DRAIN_TIMEOUT_MS, drainDelayMs: config.DRAIN_DELAY_MS ?? 0 });
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
