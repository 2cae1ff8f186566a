import type { EventEnvelope } from "@switchyard/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testEnv } from "../../../../tests/support/config.js";
import { createTestDatabase, type TestDatabase } from "../../../../tests/support/postgres.js";
import { migrate } from "../db/migrate.js";
import { openPglite } from "../db/pglite.js";
import { openPostgres } from "../db/postgres.js";
import type { Db } from "../db/types.js";
import { silentLogger } from "../log.js";
import { createMemoryBus } from "./memory.js";
import { consumeOnce, enqueueEvent, outboxMigrations, outboxSink, startOutboxRelay } from "./outbox.js";
import { pruneOnce } from "./outbox-pruning.js";
import type { Bus } from "./types.js";

const data = { hash: "h", organization_id: "3f2c8a0e-3c5a-4a4e-9a7b-7d1f1e2a9b01", workspace_id: "3f2c8a0e-3c5a-4a4e-9a7b-7d1f1e2a9b02" };
const logger = silentLogger();

const waitFor = async (check: () => Promise<boolean>, ms = 5000) => {
  const start = Date.now();
  while (!(await check())) {
    if (Date.now() - start > ms) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 20));
  }
};

// PGlite always; Postgres too when DATABASE_URL names a server (a fresh database for this file, dropped after).
const backends = [{ name: "PGlite", postgres: false }, ...(testEnv.databaseUrl ? [{ name: "Postgres", postgres: true }] : [])];

describe.each(backends)("outbox on $name", ({ postgres }) => {
  let database: TestDatabase | undefined;
  let db: Db;
  let schemas = 0;

  beforeAll(async () => {
    if (postgres) {
      database = await createTestDatabase();
      db = openPostgres({ url: database.url! });
    } else {
      db = await openPglite();
    }
  });
  afterAll(async () => {
    await db?.close();
    await database?.drop();
  });

  /** Each test gets its own schema, so counts never see another test's rows. */
  const freshSchema = async () => {
    const schema = `outbox_${++schemas}`;
    await migrate(db, schema, [...outboxMigrations(schema), { id: "001_effects", sql: `CREATE TABLE ${schema}.effects (event_id uuid)` }]);
    return schema;
  };
  const unpublished = async (schema: string) =>
    (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${schema}.outbox WHERE published_at IS NULL`))[0]?.n ?? 0;
  const enqueue = (schema: string) => db.transaction((tx) => enqueueEvent(tx, schema, "identity.api_key.created.v1", data));

  it("publishes committed events, drops rolled-back ones, and applies each effect exactly once", async () => {
    const schema = await freshSchema();
    const bus = createMemoryBus({ logger });
    const delivered: EventEnvelope[] = [];
    await bus.consume("test_effects", ["identity.>"], async (event) => {
      delivered.push(event);
      await consumeOnce(db, schema, "test_effects", event, async (tx) => {
        await tx.query(`INSERT INTO ${schema}.effects (event_id) VALUES ($1)`, [event.id]);
      });
    });
    const relay = startOutboxRelay({ db, schema, bus, logger, pollMs: 20 });
    const committed = await db.transaction((tx) => enqueueEvent(tx, schema, "identity.api_key.updated.v1", data));
    await expect(
      db.transaction(async (tx) => {
        await enqueueEvent(tx, schema, "identity.api_key.deleted.v1", data);
        throw new Error("roll back");
      }),
    ).rejects.toThrow("roll back");
    relay.wake();
    await waitFor(async () => (await unpublished(schema)) === 0 && delivered.length > 0);
    expect(delivered.map((e) => e.id)).toEqual([committed.id]);
    expect(delivered[0]).toEqual(committed);
    // A published row is gone: the outbox holds only what still waits.
    const [row] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${schema}.outbox`);
    expect(row?.n).toBe(0);

    // A redelivered event (crash between publish and mark) changes nothing the second time.
    await bus.publish(delivered[0]!);
    const effects = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${schema}.effects WHERE event_id = $1`, [committed.id]);
    expect(effects[0]?.n).toBe(1);
    await relay.stop();
  });

  it("rejects a payload the registry refuses, rolling back its producer", async () => {
    const schema = await freshSchema();
    const bad = { ...data, workspace_id: "not-a-uuid" };
    await expect(db.transaction((tx) => enqueueEvent(tx, schema, "identity.api_key.created.v1", bad))).rejects.toThrow();
    const [row] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${schema}.outbox`);
    expect(row?.n).toBe(0);
  });

  it("keeps rows while the bus is down, records the error, and publishes them in order when it is back", async () => {
    const schema = await freshSchema();
    const inner = createMemoryBus({ logger });
    let down = true;
    const received: string[] = [];
    await inner.consume("test_order", ["identity.>"], async (event) => void received.push(event.id));
    const flaky: Bus = { ...inner, publishAll: undefined, publish: (event) => (down ? Promise.reject(new Error("bus down")) : inner.publish(event)) };
    const relay = startOutboxRelay({ db, schema, bus: flaky, logger, pollMs: 20 });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await enqueue(schema)).id);
    relay.wake();
    await waitFor(async () => {
      const [row] = await db.query<{ attempts: number; last_error: string | null }>(`SELECT attempts, last_error FROM ${schema}.outbox WHERE id = $1`, [ids[0]]);
      return (row?.attempts ?? 0) >= 2 && row?.last_error === "bus down";
    });
    expect(await unpublished(schema)).toBe(3);
    down = false;
    relay.wake();
    await waitFor(async () => (await unpublished(schema)) === 0, 15_000);
    expect(received).toEqual(ids);
    await relay.stop();
  });

  it("publishes as soon as the bus is back, without waiting out the backoff it reached while the bus was down", async () => {
    const schema = await freshSchema();
    const inner = createMemoryBus({ logger });
    let down = true;
    const flaky: Bus = { ...inner, publishAll: undefined, healthy: () => !down, publish: (event) => (down ? Promise.reject(new Error("bus down")) : inner.publish(event)) };
    const relay = startOutboxRelay({ db, schema, bus: flaky, logger, pollMs: 250 });
    const [first] = [await enqueue(schema)];
    relay.wake();
    // Four failed tries: the next one is 4 s away.
    await waitFor(async () => ((await db.query<{ attempts: number }>(`SELECT attempts FROM ${schema}.outbox WHERE id = $1`, [first.id]))[0]?.attempts ?? 0) >= 4, 15_000);
    down = false;
    const back = Date.now();
    await waitFor(async () => (await unpublished(schema)) === 0, 15_000);
    expect(Date.now() - back).toBeLessThan(1_500);
    await relay.stop();
  }, 30_000);

  it("parks a row that is not a valid event and publishes the rows behind it", async () => {
    const schema = await freshSchema();
    const bus = createMemoryBus({ logger });
    const received: string[] = [];
    await bus.consume("test_invalid", ["identity.>"], async (event) => void received.push(event.id));
    await db.query(`INSERT INTO ${schema}.outbox (id, subject, data) VALUES (gen_random_uuid(), 'identity.api_key.created.v1', '{"hash": 1}')`);
    const good = await enqueue(schema);
    const relay = startOutboxRelay({ db, schema, bus, logger, pollMs: 20 });
    await waitFor(async () => (await unpublished(schema)) === 0);
    expect(received).toEqual([good.id]);
    const [parked] = await db.query<{ last_error: string }>(`SELECT last_error FROM ${schema}.outbox WHERE id <> $1`, [good.id]);
    expect(parked?.last_error).toBe("invalid event");
    await relay.stop();
  });

  it("lets several relays share one outbox without publishing a row twice", async () => {
    const schema = await freshSchema();
    const published = new Map<string, number>();
    const bus = createMemoryBus({ logger });
    const counting: Bus = {
      ...bus,
      publishAll: undefined,
      async publish(event) {
        published.set(event.id, (published.get(event.id) ?? 0) + 1);
        await new Promise((r) => setTimeout(r, 2));
      },
    };
    const relays = [1, 2, 3].map(() => startOutboxRelay({ db, schema, bus: counting, logger, pollMs: 10, batch: 5 }));
    for (let i = 0; i < 40; i++) {
      await enqueue(schema);
      relays[i % relays.length]!.wake();
    }
    await waitFor(async () => (await unpublished(schema)) === 0, 15_000);
    await Promise.all(relays.map((r) => r.stop()));
    expect(published.size).toBe(40);
    expect([...published.values()].every((n) => n === 1)).toBe(true);
  });

  /** Events inserted as a batch producer does, claimed for `relay` when it accepts them; resolves after commit. */
  const insertBatch = async (schema: string, relay: Parameters<typeof outboxSink>[1], count: number) => {
    const sink = outboxSink(schema, relay);
    const insertion = sink.insertion(Array.from({ length: count }, () => ({ subject: "identity.api_key.updated.v1" as const, data })), 1);
    await db.query(insertion.sql, [insertion.value]);
    return { insertion, committed: () => sink.committed(insertion) };
  };

  it("publishes a batch handed over after commit from memory, while other relays leave its claimed rows alone", async () => {
    const schema = await freshSchema();
    const bus = createMemoryBus({ logger });
    const received: EventEnvelope[] = [];
    await bus.consume("test_handed", ["identity.>"], async (event) => void received.push(event));
    const other: string[] = [];
    const polling = startOutboxRelay({ db, schema, bus: { ...bus, publishAll: undefined, publish: async (e) => void other.push(e.id) }, logger, pollMs: 10 });
    const relay = startOutboxRelay({ db, schema, bus, logger, pollMs: 60_000 });
    expect(relay.accepting()).toBe(true);
    const { insertion, committed } = await insertBatch(schema, relay, 3);
    expect(insertion.claimed).toBe(true);
    await new Promise((r) => setTimeout(r, 100));
    expect(other).toEqual([]);
    // The rows say what the handed-over events say, so one read back after a failure is the same event.
    const rows = await db.query<{ id: string; occurred_at: Date; claimed: boolean }>(
      `SELECT id::text, occurred_at, claimed_until > now() AS claimed FROM ${schema}.outbox ORDER BY seq`,
    );
    expect(rows.map((r) => [r.id, r.occurred_at.toISOString(), r.claimed])).toEqual(insertion.events.map((e) => [e.id, e.occurred_at, true]));
    committed();
    await waitFor(async () => (await unpublished(schema)) === 0);
    expect(received).toEqual(insertion.events);
    await Promise.all([relay.stop(), polling.stop()]);
    expect(other).toEqual([]);
  });

  it("gives handed-over events back to the poll when the bus fails, claims nothing while it does, and publishes them in order after", async () => {
    const schema = await freshSchema();
    const inner = createMemoryBus({ logger });
    let down = true;
    const received: string[] = [];
    await inner.consume("test_handed_order", ["identity.>"], async (event) => void received.push(event.id));
    const flaky: Bus = { ...inner, publishAll: (events) => (down ? Promise.reject(new Error("bus down")) : inner.publishAll!(events)) };
    const relay = startOutboxRelay({ db, schema, bus: flaky, logger, pollMs: 20 });
    const first = await insertBatch(schema, relay, 2);
    first.committed();
    await waitFor(async () => {
      const rows = await db.query<{ claimed: boolean; last_error: string | null }>(`SELECT claimed_until IS NOT NULL AS claimed, last_error FROM ${schema}.outbox ORDER BY seq`);
      return rows.length === 2 && rows[0]?.last_error === "bus down";
    });
    expect(relay.accepting()).toBe(false);
    const second = await insertBatch(schema, relay, 1);
    expect(second.insertion.claimed).toBe(false);
    second.committed();
    down = false;
    relay.wake();
    await waitFor(async () => (await unpublished(schema)) === 0, 15_000);
    expect(received).toEqual([...first.insertion.events, ...second.insertion.events].map((e) => e.id));
    expect(relay.accepting()).toBe(true);
    await relay.stop();
  });

  it("publishes rows claimed by a relay that went away once their lease has run out", async () => {
    const schema = await freshSchema();
    const bus = createMemoryBus({ logger });
    const received: string[] = [];
    await bus.consume("test_orphans", ["identity.>"], async (event) => void received.push(event.id));
    // Claimed for a relay that never hands them over (its process died after the commit).
    const { insertion } = await insertBatch(schema, { wake: () => undefined, accepting: () => true, handOver: () => undefined }, 2);
    const relay = startOutboxRelay({ db, schema, bus, logger, pollMs: 10 });
    await new Promise((r) => setTimeout(r, 60));
    expect(received).toEqual([]);
    await db.query(`UPDATE ${schema}.outbox SET claimed_until = now() - interval '1 second'`);
    await waitFor(async () => (await unpublished(schema)) === 0);
    expect(received).toEqual(insertion.events.map((e) => e.id));
    await relay.stop();
  });

  it("keeps polling on its cadence while handed-over batches keep it busy", async () => {
    const schema = await freshSchema();
    const bus = createMemoryBus({ logger });
    const received = new Set<string>();
    await bus.consume("test_busy_poll", ["identity.>"], async (event) => void received.add(event.id));
    const relay = startOutboxRelay({ db, schema, bus, logger, pollMs: 50 });
    await new Promise((r) => setTimeout(r, 20));
    // Left by a relay that died after its commit, its lease already run out.
    const { insertion: orphaned } = await insertBatch(schema, { wake: () => undefined, accepting: () => true, handOver: () => undefined }, 2);
    await db.query(`UPDATE ${schema}.outbox SET claimed_until = now() - interval '1 second'`);
    const orphanedIds = orphaned.events.map((e) => e.id);
    const start = Date.now();
    while (!orphanedIds.every((id) => received.has(id)) && Date.now() - start < 2000) {
      (await insertBatch(schema, relay, 1)).committed();
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(orphanedIds.filter((id) => received.has(id))).toEqual(orphanedIds);
    await relay.stop();
  });

  it("publishes what was handed over before it stops", async () => {
    const schema = await freshSchema();
    const bus = createMemoryBus({ logger });
    const received: string[] = [];
    await bus.consume("test_handed_stop", ["identity.>"], async (event) => {
      await new Promise((r) => setTimeout(r, 20));
      received.push(event.id);
    });
    const relay = startOutboxRelay({ db, schema, bus, logger, pollMs: 60_000 });
    const { insertion, committed } = await insertBatch(schema, relay, 2);
    committed();
    await relay.stop();
    expect(received).toEqual(insertion.events.map((e) => e.id));
    expect(await unpublished(schema)).toBe(0);
  });

  it("finishes the batch under way when stopped, then publishes nothing more", async () => {
    const schema = await freshSchema();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const published: string[] = [];
    const bus = createMemoryBus({ logger });
    const slow: Bus = {
      ...bus,
      publishAll: undefined,
      async publish(event) {
        await gate;
        published.push(event.id);
      },
    };
    const first = await enqueue(schema);
    const relay = startOutboxRelay({ db, schema, bus: slow, logger, pollMs: 10 });
    relay.wake();
    await new Promise((r) => setTimeout(r, 50));
    const stopped = relay.stop();
    release();
    await stopped;
    expect(published).toEqual([first.id]);
    expect(await unpublished(schema)).toBe(0);
    await enqueue(schema);
    relay.wake();
    await new Promise((r) => setTimeout(r, 100));
    expect(await unpublished(schema)).toBe(1);
  });

  it("applies an effect once even when the same event arrives twice at the same time, and not at all if it fails", async () => {
    const schema = await freshSchema();
    const event = await enqueue(schema);
    const apply = () =>
      consumeOnce(db, schema, "test_once", event, async (tx) => {
        await tx.query(`INSERT INTO ${schema}.effects (event_id) VALUES ($1)`, [event.id]);
        await new Promise((r) => setTimeout(r, 20));
      });
    const results = await Promise.all([apply(), apply()]);
    expect(results.sort()).toEqual([false, true]);
    // Another consumer has its own inbox entry; an effect that throws leaves none, so a redelivery applies it.
    await expect(consumeOnce(db, schema, "test_other", event, () => Promise.reject(new Error("effect failed")))).rejects.toThrow();
    expect(await consumeOnce(db, schema, "test_other", event, async () => {})).toBe(true);
    const [row] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${schema}.effects`);
    expect(row?.n).toBe(1);
  });

  it("prunes handled ids past their retention and parked rows past theirs, never unpublished rows", async () => {
    const schema = await freshSchema();
    const [legacy, pending, parked] = [await enqueue(schema), await enqueue(schema), await enqueue(schema)];
    const ago = (hours: number) => new Date(Date.now() - hours * 3_600_000).toISOString();
    const publish = (id: string, at: string, error: string | null = null) =>
      db.query(`UPDATE ${schema}.outbox SET published_at = $2, last_error = $3 WHERE id = $1`, [id, at, error]);
    // A row an earlier version marked published (and kept) a minute ago, and a row parked two hours ago.
    await publish(legacy.id, ago(1 / 60));
    await publish(parked.id, ago(2), "invalid event");
    await db.query(`INSERT INTO ${schema}.inbox (consumer, event_id, handled_at) VALUES ('c', $1, $3), ('c', $2, $4)`, [legacy.id, pending.id, ago(24 * 9), ago(24 * 7)]);
    const options = { inboxRetentionMs: 8 * 24 * 3_600_000, parkedRetentionMs: 3 * 3_600_000, everyMs: 60_000 };
    expect(await pruneOnce(db, schema, options)).toBe(2);
    const ids = async (table: "outbox" | "inbox") =>
      (await db.query<{ id: string }>(`SELECT ${table === "outbox" ? "id" : "event_id"}::text AS id FROM ${schema}.${table}`)).map((r) => r.id).sort();
    expect(await ids("outbox")).toEqual([pending.id, parked.id].sort());
    expect(await ids("inbox")).toEqual([pending.id]);
    // Parked rows go once their own retention has passed; rows never published never go.
    await db.query(`UPDATE ${schema}.outbox SET occurred_at = $1`, [ago(100)]);
    expect(await pruneOnce(db, schema, { ...options, parkedRetentionMs: 3_600_000 })).toBe(1);
    expect(await ids("outbox")).toEqual([pending.id]);
  });
});
