import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EventEnvelope } from "@switchyard/contracts";
import { testEnv } from "../../../../tests/support/config.js";
import { createTestDatabase, type TestDatabase } from "../../../../tests/support/postgres.js";
import { openDatabase } from "../db/open.js";
import { migrate } from "../db/migrate.js";
import type { Db } from "../db/types.js";
import { silentLogger } from "../log.js";
import { createMemoryBus } from "./memory.js";
import { consumeOnce, enqueueEvent, outboxMigration, startOutboxRelay } from "./outbox.js";
import type { Bus } from "./types.js";

let database: TestDatabase;
let db: Db;
const schema = "outbox_test";
const data = { hash: "h", organization_id: "3f2c8a0e-3c5a-4a4e-9a7b-7d1f1e2a9b01", workspace_id: "3f2c8a0e-3c5a-4a4e-9a7b-7d1f1e2a9b02" };

beforeAll(async () => {
  database = await createTestDatabase();
  db = await openDatabase({ url: database.url });
  await migrate(db, schema, [outboxMigration(schema), { id: "001_effects", sql: `CREATE TABLE ${schema}.effects (event_id uuid)` }]);
});
afterAll(async () => {
  await db?.close();
  await database?.drop();
});

const waitFor = async (check: () => Promise<boolean>, ms = 5000) => {
  const start = Date.now();
  while (!(await check())) {
    if (Date.now() - start > ms) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 20));
  }
};

const unpublished = async () =>
  (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${schema}.outbox WHERE published_at IS NULL`))[0]?.n ?? 0;

describe(`outbox on ${testEnv.databaseUrl ? "Postgres" : "PGlite"}`, () => {
  it("publishes committed events, drops rolled-back ones, and applies each effect exactly once", async () => {
    const bus = createMemoryBus({ logger: silentLogger() });
    const delivered: EventEnvelope[] = [];
    await bus.consume("test_effects", ["identity.>"], async (event) => {
      delivered.push(event);
      await consumeOnce(db, schema, "test_effects", event, async (tx) => {
        await tx.query(`INSERT INTO ${schema}.effects (event_id) VALUES ($1)`, [event.id]);
      });
    });
    const relay = startOutboxRelay({ db, schema, bus, logger: silentLogger(), pollMs: 20 });
    const committed = await db.transaction((tx) => enqueueEvent(tx, schema, "identity.api_key.updated.v1", data));
    await expect(
      db.transaction(async (tx) => {
        await enqueueEvent(tx, schema, "identity.api_key.deleted.v1", data);
        throw new Error("roll back");
      }),
    ).rejects.toThrow("roll back");
    relay.wake();
    await waitFor(async () => (await unpublished()) === 0 && delivered.length > 0);
    expect(delivered.map((e) => e.id)).toEqual([committed.id]);
    expect(delivered[0]).toMatchObject({ subject: "identity.api_key.updated.v1", data });

    // A redelivered event (crash between publish and mark) changes nothing the second time.
    await bus.publish(delivered[0]!);
    const effects = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${schema}.effects WHERE event_id = $1`, [committed.id]);
    expect(effects[0]?.n).toBe(1);
    await relay.stop();
  });

  it("keeps rows while the bus is down and publishes them in order when it is back", async () => {
    const inner = createMemoryBus({ logger: silentLogger() });
    let down = true;
    const received: string[] = [];
    await inner.consume("test_order", ["identity.>"], async (event) => void received.push(event.id));
    const flaky: Bus = { ...inner, publish: (event) => (down ? Promise.reject(new Error("bus down")) : inner.publish(event)) };
    const relay = startOutboxRelay({ db, schema, bus: flaky, logger: silentLogger(), pollMs: 20 });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await db.transaction((tx) => enqueueEvent(tx, schema, "identity.api_key.created.v1", data))).id);
    relay.wake();
    await waitFor(async () => {
      const [row] = await db.query<{ attempts: number; last_error: string | null }>(
        `SELECT attempts, last_error FROM ${schema}.outbox WHERE id = $1`,
        [ids[0]],
      );
      return (row?.attempts ?? 0) >= 1 && row?.last_error === "bus down";
    });
    expect(await unpublished()).toBe(3);
    down = false;
    relay.wake();
    await waitFor(async () => (await unpublished()) === 0, 15_000);
    expect(received).toEqual(ids);
    await relay.stop();
  });
});
