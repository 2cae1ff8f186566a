import { pino, type Logger } from "pino";
import { currentRequestId } from "./http/request-context.js";
import { prettyStream } from "./log-pretty.js";

export type { Logger };

/** Paths pino blanks in every log line: credentials never reach the logs. */
export const redactedPaths = [
  "req.headers.authorization",
  "req.headers.cookie",
  "req.headers['x-switchyard-caller']",
  "res.headers['set-cookie']",
  "*.key",
  "*.secret",
  "*.password",
  "*.api_key",
  "*.subject_token",
  "*.access_token",
];

export interface LoggerOptions {
  /**
   * The service every line speaks for. A process that runs several services (standalone) leaves it out and
   * gives each service a child logger with its own: pino would write a key bound twice twice.
   */
  service?: string;
  level?: string;
  /** `json`, `pretty` (one readable line per entry), or `auto`: pretty on a terminal, JSON otherwise. */
  format?: "auto" | "json" | "pretty";
  /** Tests pass a stream to read what was logged; processes write to stdout. */
  destination?: NodeJS.WritableStream;
}

/**
 * Every line logged while a request is handled carries its `reqId` (the id the router gave it, which each
 * service it calls keeps), so one request's lines can be found in every process's logs without each call
 * site passing the id along. A line that names its own `reqId` keeps it.
 */
const requestIdMixin = (): { reqId?: string } => {
  const reqId = currentRequestId();
  // A new object each time: pino assigns the line's own fields onto what the mixin returns.
  return reqId === undefined ? {} : { reqId };
};

export function createLogger(options: LoggerOptions): Logger {
  const format = options.format ?? "json";
  const pretty = format === "pretty" || (format === "auto" && !options.destination && process.stdout.isTTY === true);
  return pino(
    {
      name: options.service ?? "switchyard",
      level: options.level ?? "info",
      redact: { paths: redactedPaths, censor: "[redacted]" },
      base: options.service ? { service: options.service } : {},
      mixin: requestIdMixin,
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    // Asynchronous writes keep logging off the request's critical path; a terminal is for a person reading.
    pretty ? prettyStream(options.destination ?? process.stdout) : (options.destination ?? pino.destination({ sync: false })),
  );
}

/** A logger that discards everything, for tests that do not read logs. */
export const silentLogger = (): Logger => pino({ level: "silent" });
