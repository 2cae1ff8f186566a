import { pino, type Logger } from "pino";

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
  service: string;
  level?: string;
  /** Tests pass a stream to read what was logged; processes write JSON to stdout. */
  destination?: NodeJS.WritableStream;
}

export function createLogger(options: LoggerOptions): Logger {
  return pino(
    {
      name: options.service,
      level: options.level ?? "info",
      redact: { paths: redactedPaths, censor: "[redacted]" },
      base: { service: options.service },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    // Asynchronous writes keep logging off the request's critical path.
    options.destination ?? pino.destination({ sync: false }),
  );
}

/** A logger that discards everything, for tests that do not read logs. */
export const silentLogger = (): Logger => pino({ level: "silent" });
