import { randomUUID } from "node:crypto";
import { parseEvent, type EventData, type EventEnvelope, type EventSubject } from "@switchyard/contracts";
import type { Db, Migration, Queryable } from "../db/types.js";
import type { Logger } from "../log.js";
import { serviceOf, watchOutbox } from "../metrics.js";
import type { Bus } from "./types.js";
import { defaultPruning, outboxPruningMigration, startPruning, type PruningOptions } from "./outbox-pruning.js";

/** The outbox (events waiting to be published) and inbox (events already applied) of one service. */
export function outboxMigrations(schema: string): Migration[] {
  return [outboxTables(schema), outboxPruningMigration(schema)];
}

function outboxTables(schema: string): Migration {
  return {
    id: "000_outbox_inbox",
    sql: `
CREATE TABLE ${schema}.outbox (
  seq bigserial PRIMARY KEY,
  id uuid NOT NULL UNIQUE,
  subject text NOT NULL,
  data jsonb NOT NULL,
  occurred_at timestamptz NOT NULL DEFAULT now(),
  published_at timestamptz,
  attempts integer NOT NULL DEFAULT 0,
  last_error text,
  claimed_until timestamptz
);
CREATE INDEX outbox_unpublished ON ${schema}.outbox (seq) WHERE published_at IS NULL;
CREATE TABLE ${schema}.inbox (
  consumer text NOT NULL,
  event_id uuid NOT NULL,
  handled_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (consumer, event_id)
);
`,
  };
}

/**
 * Records an event in the same transaction as the state change it describes. The payload is checked
 * against the registry here, so a malformed event rolls back its producer instead of being parked later.
 */
export async function enqueueEvent<S extends EventSubject>(tx: Queryable, schema: string, subject: S, data: EventData<S>): Promise<EventEnvelope<S>> {
  const id = randomUUID();
  const checked = parseEvent({ id, subject, occurred_at: new Date().toISOString(), data }).data as EventData<S>;
  const [row] = await tx.query<{ occurred_at: Date }>(
    `INSERT INTO ${schema}.outbox (id, subject, data) VALUES ($1, $2, $3) RETURNING occurred_at`,
    [id, subject, JSON.stringify(checked)],
  );
  return { id, subject, occurred_at: (row?.occurred_at ?? new Date()).toISOString(), data: checked };
}

/** How long a claimed row is left to its relay before another relay may publish it (the relay's process died, say). */
const leaseSeconds = 30;

export interface OutboxInsertion {
  sql: string;
  value: string;
  /** The events as inserted, checked against the registry; a claimed insertion's relay publishes these. */
  events: EventEnvelope[];
  /** Whether the rows were inserted claimed by this process's relay, to be handed over after commit. */
  claimed: boolean;
}

/**
 * Many events as one outbox INSERT, for producers that commit state changes in batches: the rows travel as
 * one JSON parameter (`$param`), so the statement is the same whatever the batch size, and it can be the
 * last part of a statement that writes the state too (one round trip, atomic without a transaction).
 * `claimed` rows carry a lease for this process's relay, which gets them from memory after commit
 * (`OutboxRelay.handOver`) instead of claiming and reading them back; other relays leave them alone until
 * the lease runs out.
 */
export function outboxInsertion(schema: string, events: Array<{ subject: EventSubject; data: unknown }>, param: number, claimed = false): OutboxInsertion {
  const occurredAt = new Date().toISOString();
  const envelopes = events.map(({ subject, data }) => parseEvent({ id: randomUUID(), subject, occurred_at: occurredAt, data }));
  const lease = claimed ? `now() + interval '${leaseSeconds} seconds'` : "NULL";
  return {
    sql: `INSERT INTO ${schema}.outbox (id, subject, data, occurred_at, claimed_until)
          SELECT id, subject, data, occurred_at, ${lease} FROM jsonb_to_recordset($${param}::jsonb) AS r(id uuid, subject text, data jsonb, occurred_at timestamptz)`,
    value: JSON.stringify(envelopes),
    events: envelopes,
    claimed,
  };
}

export interface OutboxRelayOptions {
  db: Db;
  schema: string;
  bus: Bus;
  logger: Logger;
  /**
   * How often the relay looks for rows nobody told it about: rows a stopped process left claimed (after
   * their lease) and rows given back after a failed publish. Every producer wakes its relay or hands its
   * events over at commit, so this is a safety net, not the path of an event. Defaults: one second on
   * Postgres; five on PGlite, which only this process writes. Retries after a failure back off from the
   * shorter of this and 250 ms.
   */
  pollMs?: number;
  batch?: number;
  /** How long parked outbox rows and handled inbox ids are kept; see `PruningOptions`. */
  pruning?: PruningOptions;
}

export interface OutboxRelay {
  /** Publish now instead of at the next poll: called right after a producer commits. */
  wake(): void;
  /**
   * Whether rows committed now should be claimed for this relay and handed over: not while the bus is
   * failing, stopping, or a backlog is waiting in memory (then the rows are left to the poll).
   */
  accepting(): boolean;
  /** Publishes committed events whose rows were inserted claimed for this relay (`outboxInsertion`), from memory. */
  handOver(events: readonly EventEnvelope[]): void;
  /** Publishes what was handed over and finishes the batch under way, then stops. */
  stop(): Promise<void>;
}

interface OutboxRow {
  id: string;
  subject: string;
  data: unknown;
  occurred_at: Date;
}

/**
 * Publishes outbox rows and deletes them once published. Events handed over after their producer's commit are
 * published from memory, in commit order; the rest (events of `enqueue`, rows released after a failure,
 * rows left by a process that died) are claimed with SKIP LOCKED in order, so several replicas share the
 * work. The event id is the bus's deduplication id, so a row published twice (a crash between publish
 * and mark) is delivered once. A bus outage leaves rows in place to be retried.
 */
export function startOutboxRelay(options: OutboxRelayOptions): OutboxRelay {
  const { db, schema, bus, logger } = options;
  const pollMs = options.pollMs ?? (db.kind === "postgres" ? 1000 : 5000);
  const retryMs = Math.min(pollMs, 250);
  const batch = options.batch ?? 100;
  const lock = db.kind === "postgres" ? "FOR UPDATE SKIP LOCKED" : "";
  const handed: EventEnvelope[] = [];
  let stopped = false;
  let running: Promise<void> | undefined;
  let again = false;
  let pollDue = true;
  let failures = 0;
  let timer: NodeJS.Timeout | undefined;

  // A published row has done its work: deleting it costs less than marking it and pruning it later, and
  // keeps the outbox as small as its backlog. (The bus keeps the events themselves: NATS streams for a week.)
  const markPublished = async (ids: string[]) => {
    if (ids.length === 0) return;
    await db.query(`DELETE FROM ${schema}.outbox WHERE id IN (SELECT unnest($1::uuid[]))`, [ids]);
  };

  /** Releases rows that could not be published so the poll takes them again, in order; the first one counts an attempt. */
  const release = async (ids: string[], error: unknown) => {
    await db.query(
      `UPDATE ${schema}.outbox SET attempts = attempts + CASE WHEN id = $1 THEN 1 ELSE 0 END,
         last_error = CASE WHEN id = $1 THEN $2 ELSE last_error END, claimed_until = NULL
       WHERE id IN (SELECT unnest($3::uuid[]))`,
      [ids[0], error instanceof Error ? error.message : String(error), ids],
    );
  };

  /** Publishes claimed events in order and deletes their rows together: one statement per batch, not per event. */
  async function publish(events: EventEnvelope[]): Promise<void> {
    const published: string[] = [];
    const failed = async (index: number, error: unknown): Promise<never> => {
      await markPublished(published);
      await release(events.slice(index).map((e) => e.id), error);
      throw new PublishFailed(error);
    };
    if (bus.publishAll) {
      // All or none: batch consumers get the events together.
      await bus.publishAll(events).catch((error: unknown) => failed(0, error));
      published.push(...events.map((e) => e.id));
    } else {
      for (const [index, event] of events.entries()) {
        await bus.publish(event).catch((error: unknown) => failed(index, error));
        published.push(event.id);
      }
    }
    await markPublished(published);
  }

  /**
   * Claims a batch with a lease instead of holding a transaction while publishing: the in-process bus runs
   * consumers inside `publish`, and they need the database (PGlite has a single connection).
   */
  async function pollOnce(): Promise<number> {
    const rows = await db.query<OutboxRow & { seq: string }>(
      `UPDATE ${schema}.outbox SET claimed_until = now() + interval '${leaseSeconds} seconds'
       WHERE seq IN (SELECT seq FROM ${schema}.outbox
                     WHERE published_at IS NULL AND (claimed_until IS NULL OR claimed_until < now())
                     ORDER BY seq LIMIT $1 ${lock})
       RETURNING seq::text, id::text, subject, data, occurred_at`,
      [batch],
    );
    rows.sort((a, b) => Number(a.seq) - Number(b.seq));
    const events: EventEnvelope[] = [];
    for (const row of rows) {
      try {
        events.push(parseEvent({ id: row.id, subject: row.subject, occurred_at: row.occurred_at.toISOString(), data: row.data }));
      } catch (error) {
        // A row no schema accepts would block every row behind it; park it with its reason.
        logger.error({ err: error, eventId: row.id, subject: row.subject }, "outbox row is not a valid event; parked");
        await db.query(`UPDATE ${schema}.outbox SET published_at = now(), last_error = 'invalid event' WHERE seq = $1`, [row.seq]);
      }
    }
    if (events.length > 0) await publish(events);
    return rows.length;
  }

  async function run(): Promise<void> {
    do {
      again = false;
      try {
        while (handed.length > 0) await publish(handed.splice(0, batch));
        if (pollDue && !stopped) {
          pollDue = false;
          let claimed: number;
          do claimed = await pollOnce();
          while (claimed === batch && !stopped);
        }
        failures = 0;
      } catch (error) {
        failures++;
        if (failures === 1 || failures % 20 === 0) {
          logger.warn({ err: error instanceof PublishFailed ? error.cause : error, failures, schema }, "outbox relay could not publish; will retry");
        }
        // What else waits in memory goes back to the poll, which retries after a backoff, in order.
        const rest = handed.splice(0).map((e) => e.id);
        if (rest.length > 0) await release(rest, error instanceof PublishFailed ? error.cause : error).catch(() => undefined);
        return;
      }
    } while ((again && !stopped) || handed.length > 0);
  }

  const kick = (poll: boolean) => {
    if (poll) pollDue = true;
    if (running) {
      again = true;
      return;
    }
    if (stopped && handed.length === 0) return;
    running = run().finally(() => {
      running = undefined;
      schedule();
    });
  };

  // The poll keeps its own cadence: runs for handed-over events must not keep pushing it back, or rows left
  // by a replica that died would wait for as long as this one stays busy.
  const schedule = () => {
    if (stopped) return;
    if (failures === 0 && timer) return;
    clearTimeout(timer);
    // Back off while the bus is down, up to ten seconds, so a long outage costs little.
    const delay = failures > 0 ? Math.min(10_000, retryMs * 2 ** Math.min(failures, 6)) : pollMs;
    timer = setTimeout(() => {
      timer = undefined;
      kick(true);
    }, delay);
    timer.unref();
    if (failures > 0) watchRecovery();
  };

  // While backing off, a cheap check of the bus's connection: when it comes back after being lost, the rows
  // go at once instead of after a backoff that may have grown to ten seconds (and the next outage's first
  // failure is logged). A bus that stays connected while publishes fail is left to the backoff.
  let watching: NodeJS.Timeout | undefined;
  let lost = false;
  const watchRecovery = () => {
    if (watching) return;
    lost = false;
    watching = setInterval(() => {
      const healthy = bus.healthy();
      if (!healthy) lost = true;
      if (stopped || failures === 0 || (healthy && lost)) {
        clearInterval(watching);
        watching = undefined;
        if (!stopped && failures > 0) {
          clearTimeout(timer);
          timer = undefined;
          kick(true);
        }
      }
    }, Math.min(retryMs, 250));
    watching.unref();
  };

  kick(true);
  const pruning = startPruning(db, schema, logger, options.pruning ?? defaultPruning);
  const unwatch = watchOutbox(serviceOf(logger), schema, async () => {
    const [row] = await db.query<{ pending: number; lag: number }>(
      `SELECT count(*)::int AS pending, COALESCE(EXTRACT(EPOCH FROM now() - min(occurred_at)), 0)::float8 AS lag
       FROM ${schema}.outbox WHERE published_at IS NULL`,
    );
    return { pending: row?.pending ?? 0, lagSeconds: row?.lag ?? 0 };
  });
  return {
    wake() {
      // During an outage every commit would wake the relay; leave retries to the backoff until the bus is back.
      if (stopped || (failures > 0 && !bus.healthy())) return;
      kick(true);
    },
    accepting: () => !stopped && failures === 0 && handed.length < 10 * batch,
    handOver(events) {
      handed.push(...events);
      kick(false);
    },
    async stop() {
      stopped = true;
      unwatch();
      clearTimeout(timer);
      clearInterval(watching);
      await Promise.all([running, pruning.stop()]);
    },
  };
}

class PublishFailed extends Error {
  constructor(override readonly cause: unknown) {
    super("publish failed");
  }
}

/**
 * Applies an event's effect exactly once per consumer: the inbox row and the effect commit together, so a
 * redelivered event finds its id already there and changes nothing.
 */
export async function consumeOnce(
  db: Db,
  schema: string,
  consumer: string,
  event: EventEnvelope,
  effect: (tx: Queryable) => Promise<void>,
): Promise<boolean> {
  return db.transaction(async (tx) => {
    const inserted = await tx.query(
      `INSERT INTO ${schema}.inbox (consumer, event_id) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING event_id`,
      [consumer, event.id],
    );
    if (inserted.length === 0) return false;
    await effect(tx);
    return true;
  });
}

/** How a service's domain code emits events: into its outbox inside the caller's transaction. */
export interface EventSink {
  enqueue<S extends EventSubject>(tx: Queryable, subject: S, data: EventData<S>): Promise<void>;
  /** Many events as one INSERT taking their rows as `$param` (see `outboxInsertion`); each is checked like `enqueue`'s. */
  insertion(events: Array<{ [S in EventSubject]: { subject: S; data: EventData<S> } }[EventSubject]>, param: number): OutboxInsertion;
  /** Called after commit so the relay publishes now instead of at its next poll; an insertion's claimed events are handed over. */
  committed(insertion?: OutboxInsertion): void;
}

export function outboxSink(schema: string, relay: Pick<OutboxRelay, "wake"> & Partial<Pick<OutboxRelay, "accepting" | "handOver">>): EventSink {
  return {
    async enqueue(tx, subject, data) {
      await enqueueEvent(tx, schema, subject, data);
    },
    insertion: (events, param) => outboxInsertion(schema, events, param, relay.accepting?.() ?? false),
    committed(insertion) {
      if (insertion?.claimed && relay.handOver) relay.handOver(insertion.events);
      else relay.wake();
    },
  };
}
