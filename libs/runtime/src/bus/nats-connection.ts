import type { Logger } from "../log.js";
import { wakeablePause } from "./pause.js";

export interface BackgroundConnectOptions<C> {
  /** One connection attempt; rejects when the server cannot be reached. */
  connect(): Promise<C>;
  logger: Logger;
  /** The server, for log lines. */
  server: string;
  /** Wait after the first failed attempt; it doubles after each failure up to `maxDelayMs`. Default 250 ms. */
  initialDelayMs?: number;
  /** Longest wait between attempts. Default 15 s. */
  maxDelayMs?: number;
  /** Jitter source in [0, 1), so replicas restarted together do not retry in step. */
  random?: () => number;
}

export interface BackgroundConnection<C> {
  /** Resolves with the connection once an attempt succeeds; never rejects (a cancelled one never resolves). */
  readonly ready: Promise<C>;
  /** Resolves once the first attempt has succeeded or failed. */
  readonly firstAttempt: Promise<void>;
  /** The connection once made, else undefined. */
  current(): C | undefined;
  /** Failed attempts so far. */
  failures(): number;
  /** Stops retrying; resolves with the connection if an attempt under way succeeded, for the caller to close. */
  cancel(): Promise<C | undefined>;
}

/** Whether a failure count is worth a warning: the 1st, 2nd, 4th, 8th… so an outage of hours logs a few dozen lines. */
const worthLogging = (failures: number) => (failures & (failures - 1)) === 0;

/**
 * Connects, and keeps trying in the background with capped exponential backoff and jitter while the server
 * cannot be reached, so a process started during an outage serves what needs no connection instead of
 * exiting. Only the first connection is this loop's: once made, the client reconnects by itself.
 */
export function connectInBackground<C>(options: BackgroundConnectOptions<C>): BackgroundConnection<C> {
  const { logger, server } = options;
  const initialDelayMs = options.initialDelayMs ?? 250;
  const maxDelayMs = options.maxDelayMs ?? 15_000;
  const random = options.random ?? Math.random;
  if (!(initialDelayMs > 0) || !(maxDelayMs >= initialDelayMs)) throw new Error(`backoff needs 0 < initialDelayMs <= maxDelayMs, got ${initialDelayMs} and ${maxDelayMs}`);

  let connection: C | undefined;
  let failures = 0;
  let cancelled = false;
  const pause = wakeablePause();
  let resolveReady: (c: C) => void = () => undefined;
  const ready = new Promise<C>((resolve) => (resolveReady = resolve));
  let firstAttemptDone: () => void = () => undefined;
  const firstAttempt = new Promise<void>((resolve) => (firstAttemptDone = resolve));

  const loop = (async (): Promise<C | undefined> => {
    while (!cancelled) {
      try {
        const made = await options.connect();
        if (cancelled) return made;
        connection = made;
        if (failures > 0) logger.info({ server, attempts: failures + 1 }, "NATS connected after an outage at startup");
        resolveReady(made);
        firstAttemptDone();
        return made;
      } catch (error) {
        failures++;
        firstAttemptDone();
        // Full backoff scaled by a jitter of ±20 %.
        const delayMs = Math.round(Math.min(maxDelayMs, initialDelayMs * 2 ** (failures - 1)) * (0.8 + 0.4 * random()));
        if (worthLogging(failures)) {
          logger.warn({ server, failures, retryInMs: delayMs, err: error }, "NATS unreachable; serving without it and retrying in the background");
        }
        if (!cancelled) await pause.sleep(delayMs);
      }
    }
    firstAttemptDone();
    return undefined;
  })();

  return {
    ready,
    firstAttempt,
    current: () => connection,
    failures: () => failures,
    async cancel() {
      cancelled = true;
      pause.wake();
      const made = await loop;
      // A connection the bus was given is the bus's to close; one made as we cancelled is handed back.
      return made !== undefined && made !== connection ? made : undefined;
    },
  };
}
