import { within, type Db, type Logger } from "@switchyard/runtime";
import { giveBack, leaseSlice, sweepWindows, type LeaseAnswer } from "./rate-leases.js";
import { decide, RateLimitUnavailableError, type RateDecision, type RateLimiter } from "./rate-limiter.js";

const windowMs = 60_000;
/** Retry-After of a request refused because no slice could be leased: outages worth retrying are short. */
const unavailableRetrySeconds = 2;
/** After a lease failed, requests that need one are refused this long without asking: a down database is not hammered. */
const failFastMs = 500;
/** A refusal learnt from Postgres is kept at least this long, so even rounding at the edge cannot cost a round trip per request. */
const minRefusalMs = 100;

/** One key's slices on this replica, for one minute. */
interface KeySlices {
  window: number;
  perMinute: number;
  /** Requests leased to this replica in this minute, and how many of them it admitted. */
  granted: number;
  used: number;
  /** Slices leased under a higher limit and taken out of use when it was lowered; the next lease gives them back. */
  returning: number;
  /** The shared figures of the last lease, to answer refusals without asking again. */
  previous: number;
  leased: number;
  /** Until then, every lease would be refused: the minute's allowance is leased and the previous minute has not faded enough. */
  refusedUntil: number;
  /** Requests of this key waiting for a slice here: the next lease asks for all of them. */
  waiting: number;
  leasing?: Promise<void>;
}

/** What this replica leased in the minute and will not admit. */
const unusedOf = (s: KeySlices): number => s.granted - s.used + s.returning;

export interface SharedRateLimiterOptions {
  now?: () => number;
  logger?: Logger;
  /** A lease not answered by then fails its requests with 503; its late grant is still used. */
  leaseTimeoutMs?: number;
  /** How often ended minutes' unused slices are given back and old minutes swept. */
  tickMs?: number;
}

/**
 * Shared by every router replica through Postgres, with one round trip per slice rather than per request.
 * A replica admits from slices it leases of a key's minute allowance; when its slice is used up it leases the
 * next, asking for every request waiting for one, and gets at least an eighth of what is left (at least one),
 * so a busy replica simply comes back more often. The lease statement grants only what fits:
 *
 *   leased(m) ≤ limit − previous(m−1)·(1 − elapsed/60 s), evaluated at every grant,
 *
 * and a replica admits only what it was granted, so all replicas together admit at most the limit in every
 * minute, and the sliding-window estimate stays within it at every instant (the previous minute only fades,
 * and what it counts is at least what was admitted in it). That is inside the 10% overshoot allowed; only
 * clocks that disagree at a minute's turn can add to it. The floor: every leased request is admitted by a
 * replica that keeps getting requests, so with demand at every replica exactly the limit is admitted; a
 * replica whose requests stop strands at most its last slice (an eighth of what was left, or what it asked
 * for), refused elsewhere until the minute ends. Slices left at a minute's end are given back, so the next
 * minute weighs only admitted requests. If Postgres cannot lease a slice, the requests that needed one fail
 * with RateLimitUnavailableError (503); slices already held keep admitting.
 */
export function sharedRateLimiter(db: Db, options: SharedRateLimiterOptions = {}): RateLimiter {
  const now = options.now ?? Date.now;
  const leaseTimeoutMs = options.leaseTimeoutMs ?? 5000;
  const slices = new Map<string, KeySlices>();
  /** Unused slices of ended minutes, per minute and key, until Postgres has taken them back. */
  const unused = new Map<number, Map<string, number>>();
  let failing = false;
  let failedAt = 0;
  let sweptWindow = 0;
  let ticking: Promise<void> | undefined;

  const owe = (window: number, key: string, n: number) => {
    if (n <= 0) return;
    const keys = unused.get(window) ?? new Map<string, number>();
    unused.set(window, keys.set(key, (keys.get(key) ?? 0) + n));
  };

  const noteOutcome = (error?: unknown) => {
    if (error && !failing) options.logger?.warn({ err: error }, "rate limit leases failing: requests that need a new slice are refused with 503");
    else if (!error && failing) options.logger?.info("rate limit leases work again");
    failing = error !== undefined;
    // Real elapsed time, not the minute clock (which tests set): this is about not hammering a down database.
    if (failing) failedAt = performance.now();
  };

  function slicesOf(key: string, perMinute: number, window: number): KeySlices {
    let s = slices.get(key);
    if (s?.window !== window) {
      if (s) owe(s.window, key, unusedOf(s));
      s = { window, perMinute, granted: 0, used: 0, returning: 0, previous: 0, leased: 0, refusedUntil: 0, waiting: 0 };
      slices.set(key, s);
    } else if (s.perMinute !== perMinute) {
      // The key's limit changed: what Postgres refused under the old one says nothing about the new one, and
      // what is left of a slice leased under a higher limit would keep admitting past a lower one.
      if (perMinute < s.perMinute) Object.assign(s, { returning: s.returning + s.granted - s.used, granted: s.used });
      Object.assign(s, { perMinute, refusedUntil: 0 });
    }
    return s;
  }

  function lease(key: string, s: KeySlices, t: number): Promise<void> {
    const fade = 1 - (t - s.window * windowMs) / windowMs;
    const apply = (answer: LeaseAnswer) => {
      noteOutcome();
      // A grant that arrives after its minute ended is given back with the rest of that minute's slices.
      if (slices.get(key) !== s) return owe(s.window, key, answer.granted);
      Object.assign(s, { granted: s.granted + answer.granted, previous: answer.previous, leased: answer.leased });
      if (answer.granted === 0) {
        const wait = decide(answer.previous, answer.leased + 1, s.perMinute, t);
        s.refusedUntil = t + Math.max(minRefusalMs, wait.retryAfterSeconds * 1000);
      }
    };
    const returned = s.returning;
    s.returning = 0;
    const answered = leaseSlice(db, key, s.window, s.perMinute, fade, Math.min(s.waiting, s.perMinute), returned).then(apply);
    const attempt = within(answered, leaseTimeoutMs, `rate limit lease not answered in ${leaseTimeoutMs} ms`).then(
      () => undefined,
      (error: unknown) => {
        noteOutcome(error);
        throw new RateLimitUnavailableError(unavailableRetrySeconds, { cause: error });
      },
    );
    // Every waiter of this lease awaits `attempt`; these handlers only clear it once settled.
    const settle = () => {
      if (s.leasing === attempt) s.leasing = undefined;
    };
    attempt.then(settle, settle);
    // A statement that failed gave nothing back: the next lease, or the minute's end, does.
    answered.catch(() => {
      if (slices.get(key) === s) s.returning += returned;
      else owe(s.window, key, returned);
    });
    return attempt;
  }

  async function tick(): Promise<void> {
    const window = Math.floor(now() / windowMs);
    for (const [key, s] of slices) {
      if (s.window < window && !s.leasing) {
        owe(s.window, key, unusedOf(s));
        slices.delete(key);
      }
    }
    for (const [w, keys] of unused) {
      // Only the previous minute still weighs on a decision; older slices no longer matter.
      if (w >= window - 1) await giveBack(db, w, keys);
      unused.delete(w);
    }
    if (sweptWindow !== window) {
      await sweepWindows(db, window);
      sweptWindow = window;
    }
  }
  const runTick = () =>
    (ticking ??= tick()
      .catch((error: unknown) => options.logger?.warn({ err: error }, "rate limit upkeep failed; retrying"))
      .finally(() => (ticking = undefined)));
  const timer = setInterval(runTick, options.tickMs ?? 1000);
  timer.unref();

  return {
    async hit(key, perMinute): Promise<RateDecision> {
      for (;;) {
        const t = now();
        const s = slicesOf(key, perMinute, Math.floor(t / windowMs));
        if (s.used < s.granted) {
          s.used++;
          return { allowed: true, retryAfterSeconds: 0 };
        }
        if (t < s.refusedUntil) {
          const decision = decide(s.previous, s.leased + 1, perMinute, t);
          return { allowed: false, retryAfterSeconds: decision.allowed ? 1 : decision.retryAfterSeconds };
        }
        if (failing && !s.leasing && performance.now() - failedAt < failFastMs) throw new RateLimitUnavailableError(unavailableRetrySeconds);
        s.waiting++;
        try {
          await (s.leasing ??= lease(key, s, t));
        } finally {
          s.waiting--;
        }
      }
    },
    async close() {
      clearInterval(timer);
      await ticking;
      // Slices this replica still holds go back to the minute, for the replicas that stay.
      const window = Math.floor(now() / windowMs);
      for (const [key, s] of slices) if (s.window === window && !s.leasing) owe(window, key, unusedOf(s));
      slices.clear();
      await runTick();
    },
  };
}
