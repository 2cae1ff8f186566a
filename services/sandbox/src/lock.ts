import { randomUUID } from "node:crypto";
import type { Logger, Queryable } from "@switchyard/runtime";

/** Runs `fn` while holding `key`; an aborted signal gives up waiting (and rejects). */
export type Lock = <T>(key: string, fn: () => Promise<T>, signal?: AbortSignal) => Promise<T>;

/** Runs functions with the same key one after another, in the order they asked, in this process. */
export function keyedLock(): Lock {
  const tails = new Map<string, Promise<unknown>>();
  return async function lock<T>(key: string, fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const previous = tails.get(key) ?? Promise.resolve();
    const run = previous
      .catch(() => undefined)
      .then(() => {
        signal?.throwIfAborted(); // its caller left while it waited: its turn passes at once
        return fn();
      });
    tails.set(key, run);
    try {
      return await run;
    } finally {
      if (tails.get(key) === run) tails.delete(key);
    }
  };
}

export interface LeaseOptions {
  /** How long a lease lasts unless renewed: how long others wait on a holder that died. */
  ttlMs: number;
  logger: Logger;
}

const pause = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(done, ms);
    function done() {
      signal?.removeEventListener("abort", abort);
      resolve();
    }
    function abort() {
      clearTimeout(timer);
      reject(signal!.reason as Error);
    }
    signal?.addEventListener("abort", abort, { once: true });
  });

/**
 * One holder at a time per key across every replica: a row in `sandbox.leases`, taken when free or
 * expired and renewed while held. A lease row rather than a session advisory lock, because that would
 * pin a pooled connection for the whole call (minutes of commands) while the call needs others.
 */
export function leaseLock(db: Queryable, options: LeaseOptions): Lock {
  const { ttlMs, logger } = options;
  return async function lease<T>(key: string, fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const holder = randomUUID();
    for (let wait = 25; ; wait = Math.min(wait * 2, 500)) {
      signal?.throwIfAborted();
      const taken = await db.query(
        `INSERT INTO sandbox.leases (id, holder, expires_at) VALUES ($1, $2, now() + make_interval(secs => $3::int / 1000.0))
         ON CONFLICT (id) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at WHERE sandbox.leases.expires_at < now()
         RETURNING holder`,
        [key, holder, ttlMs],
      );
      if (taken.length > 0) break;
      await pause(wait, signal);
    }
    const renew = setInterval(() => {
      db.query("UPDATE sandbox.leases SET expires_at = now() + make_interval(secs => $3::int / 1000.0) WHERE id = $1 AND holder = $2 RETURNING id", [key, holder, ttlMs])
        .then((rows) => {
          if (rows.length === 0) logger.error({ key }, "a sandbox lease expired while held; another replica may use the container at the same time");
        })
        .catch((error: unknown) => logger.warn({ err: error, key }, "could not renew a sandbox lease; it tries again"));
    }, Math.max(100, Math.floor(ttlMs / 3)));
    renew.unref();
    try {
      return await fn();
    } finally {
      clearInterval(renew);
      await db.query("DELETE FROM sandbox.leases WHERE id = $1 AND holder = $2", [key, holder]).catch((error: unknown) => logger.warn({ err: error, key }, "could not release a sandbox lease; it expires"));
    }
  };
}

/** In-process order first (no polling among our own callers), then the lease that other replicas see. */
export function replicaLock(db: Queryable, options: LeaseOptions): Lock {
  const local = keyedLock();
  const lease = leaseLock(db, options);
  return (key, fn, signal) => local(key, () => lease(key, fn, signal), signal);
}
