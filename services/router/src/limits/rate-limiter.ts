import type { Migration } from "@switchyard/runtime";

/** The shared count could not be reached: the caller should retry shortly, not think it is over its limit. */
export class RateLimitUnavailableError extends Error {
  constructor(
    readonly retryAfterSeconds: number,
    options?: ErrorOptions,
  ) {
    super("Rate limit store is temporarily unavailable", options);
  }
}

export interface RateDecision {
  allowed: boolean;
  /** Seconds until a request would be admitted again (whole seconds, at least 1 when refused). */
  retryAfterSeconds: number;
}

/** Requests per minute per key, counted over a sliding window (two fixed minutes, weighted). */
export interface RateLimiter {
  hit(key: string, perMinute: number): Promise<RateDecision>;
  close(): Promise<void>;
}

const windowMs = 60_000;

/**
 * `current` includes the request being decided. The previous minute counts in proportion to how much
 * of it still lies inside the sliding minute; when refused, the wait is how long until that weight has
 * faded enough (or, when this minute alone is over the limit, until the next minute has faded it).
 */
export function decide(previous: number, current: number, perMinute: number, now: number): RateDecision {
  const windowStart = Math.floor(now / windowMs) * windowMs;
  const elapsed = now - windowStart;
  const weighted = previous * (1 - elapsed / windowMs) + current;
  if (weighted <= perMinute) return { allowed: true, retryAfterSeconds: 0 };
  // Still this minute: previous·(1−e) + current ≤ limit. Next minute: this minute's earlier hits become the
  // fading part, and the request itself is one more: (current−1)·(1−e) + 1 ≤ limit.
  const waitMs =
    current <= perMinute
      ? (1 - (perMinute - current) / previous) * windowMs - elapsed
      : windowMs - elapsed + (1 - (perMinute - 1) / (current - 1)) * windowMs;
  return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)) };
}

/** Exact for one process: the standalone deployment, or a single router. */
export function memoryRateLimiter(now: () => number = Date.now): RateLimiter {
  const counts = new Map<string, { window: number; previous: number; current: number }>();
  let sweepAt = now() + windowMs * 2;
  return {
    async hit(key, perMinute) {
      const t = now();
      const window = Math.floor(t / windowMs);
      if (t > sweepAt) {
        for (const [k, v] of counts) if (v.window < window - 1) counts.delete(k);
        sweepAt = t + windowMs * 2;
      }
      let entry = counts.get(key);
      if (!entry) {
        entry = { window, previous: 0, current: 0 };
        counts.set(key, entry);
      } else if (entry.window !== window) {
        entry.previous = entry.window === window - 1 ? entry.current : 0;
        entry.current = 0;
        entry.window = window;
      }
      const decision = decide(entry.previous, entry.current + 1, perMinute, t);
      if (decision.allowed) entry.current++;
      return decision;
    },
    async close() {},
  };
}

export const rateLimitMigrations: Migration[] = [
  {
    id: "001_rate_windows",
    sql: `
CREATE TABLE router.rate_windows (
  key_hash text NOT NULL,
  window_start bigint NOT NULL,
  count integer NOT NULL,
  PRIMARY KEY (key_hash, window_start)
);
`,
  },
  {
    id: "002_rate_leases",
    // `count` becomes what replicas leased in the minute; `granted` is the last grant, read back by the lease statement.
    sql: `
ALTER TABLE router.rate_windows ADD COLUMN granted integer NOT NULL DEFAULT 0;
CREATE FUNCTION router.rate_grant(per_minute integer, fade double precision, previous integer, leased integer, wanted integer)
RETURNS integer LANGUAGE sql IMMUTABLE AS $$
  SELECT GREATEST(0, LEAST(room, GREATEST(wanted, (room + 7) / 8)))
  FROM (SELECT floor(per_minute - previous * fade + 1e-9)::integer - leased AS room) r
$$;
`,
  },
];
