import { extended, within, type Logger } from "@switchyard/runtime";
import { hostname } from "node:os";
import type { IdentityHolds, SpendHolds } from "./holds.js";

/**
 * The owner of a replica's holds when SWITCHYARD_REPLICA_ID is unset: service, host and port (a pod's name
 * is its host name), the same when the replica starts again. A process on an ephemeral port (0) adds its
 * pid, so two on one host never free each other's holds.
 */
export const defaultReplicaId = (service: string, port: number): string => `${service}@${hostname()}:${port === 0 ? `0-pid${process.pid}` : port}`;

export interface LeaseOptions {
  /** This replica: the owner of every hold it takes. */
  owner: string;
  /** How long a hold outlives this replica's last renewal; renewed every third of it. */
  leaseMs: number;
  logger: Logger;
  /** Tries of a release that failed, after the first; the waits between them double from `retryBaseMs`. */
  releaseRetries?: number;
  retryBaseMs?: number;
  retryMaxMs?: number;
  /** How long stopping waits for identity (the last releases and the detach). */
  stopWaitMs?: number;
}

export interface LeasedHolds {
  holds: SpendHolds;
  /** Drained: stop renewing, try failed releases once more, and leave the remaining holds to their deadline. */
  stop(): Promise<void>;
}

/**
 * Holds owned by this replica. First frees what an earlier run of the same replica left (those requests
 * died with it), then renews the lease of its holds while it runs, so identity frees them soon after it
 * dies instead of at their deadline. A release that fails (identity or its database unreachable) is tried
 * again with backoff instead of being left to block the key until the hold expires.
 */
export async function leasedHolds(identity: IdentityHolds, options: LeaseOptions): Promise<LeasedHolds> {
  const { owner, leaseMs, logger } = options;
  const retries = options.releaseRetries ?? 8;
  const baseMs = options.retryBaseMs ?? 1000;
  const maxMs = options.retryMaxMs ?? 30_000;
  const stopWaitMs = options.stopWaitMs ?? 2000;
  try {
    const released = await identity.releaseOwner(owner);
    if (released > 0) logger.info({ owner, released }, "spend holds of this replica's previous run released");
  } catch (error) {
    // Not fatal: their leases lapse without renewal, and identity's reaper frees them.
    logger.warn({ err: error, owner }, "could not release the spend holds of this replica's previous run; their leases will lapse");
  }

  let renewing: Promise<unknown> | undefined;
  const heartbeat = setInterval(() => {
    renewing ??= identity
      .renew(owner, leaseMs)
      .catch((error: unknown) => logger.warn({ err: error, owner }, "could not renew the leases of this replica's spend holds"))
      .finally(() => (renewing = undefined));
  }, Math.max(100, Math.floor(leaseMs / 3)));
  heartbeat.unref();

  const retrying = new Map<string, NodeJS.Timeout>();
  async function release(generationId: string, attempt: number): Promise<boolean> {
    try {
      const released = await identity.release(generationId);
      if (attempt > 0) logger.info({ generationId, attempt }, "spend hold released after a retry");
      return released;
    } catch (error) {
      if (attempt >= retries) {
        logger.error({ err: error, generationId, attempts: attempt + 1 }, "gave up releasing a spend hold; it counts until it expires");
        return false;
      }
      const waitMs = Math.min(maxMs, baseMs * 2 ** attempt);
      logger.warn({ err: error, generationId, attempt, retryInMs: waitMs }, "could not release a spend hold; trying again");
      const timer = setTimeout(() => {
        retrying.delete(generationId);
        void release(generationId, attempt + 1);
      }, waitMs);
      timer.unref();
      retrying.set(generationId, timer);
      return false;
    }
  }

  return {
    holds: {
      hold: (request) => identity.hold(extended(request, { owner, lease_ms: leaseMs })),
      release: (generationId) => release(generationId, 0),
    },
    async stop() {
      clearInterval(heartbeat);
      const pending = [...retrying.keys()];
      for (const timer of retrying.values()) clearTimeout(timer);
      retrying.clear();
      // Identity may be stopping too: a drain waits a moment for it, never the client's full retry window.
      const detach = async () => {
        await renewing;
        await Promise.all(pending.map((id) => release(id, retries)));
        await identity.detach(owner);
      };
      const detached = within(detach(), stopWaitMs, `identity did not answer within ${stopWaitMs} ms`);
      await detached.catch((error: unknown) =>
        logger.warn({ err: error, owner }, "could not detach this replica's spend holds; identity frees them when their leases lapse"),
      );
    },
  };
}

