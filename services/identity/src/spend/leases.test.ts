import { migrate, openDatabase, type Db, type Queryable } from "@switchyard/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { organizationWithKeys } from "../../../../tests/support/identity-keys.js";
import { testEnv } from "../../../../tests/support/config.js";
import { createTestDatabase, type TestDatabase } from "../../../../tests/support/postgres.js";
import { migrations, schema } from "../migrations.js";
import { renewHolds } from "./leases.js";

const key = "c".repeat(64);
const owner = "replica-a";
let database: TestDatabase;
let db: Db;

beforeAll(async () => {
  database = await createTestDatabase();
  db = await openDatabase({ url: database.url });
  await migrate(db, schema, migrations);
  await organizationWithKeys(db, [[key, null]]);
}, 60_000);
afterAll(async () => {
  await db?.close();
  await database?.drop();
});

const holdOf = (db: Queryable, generationId: string) =>
  db.query(
    `INSERT INTO identity.holds (generation_id, key_hash, guardrail_ids, amount, is_byok, expires_at, owner, lease_until, organization_id)
     SELECT $1, $2, '{}', 0.01, false, now() + interval '1 minute', $3, now() + interval '30 seconds', organization_id FROM identity.api_keys WHERE hash = $2`,
    [generationId, key, owner],
  );

/** Resolves once a statement of this database waits for a row lock, or after two seconds. */
async function lockWaited(): Promise<void> {
  for (let tries = 0; tries < 100; tries++) {
    const [row] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`);
    if (row!.n > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

// Replicas share the rows on Postgres alone; an embedded database has one connection, which cannot deadlock.
describe.skipIf(!testEnv.databaseUrl)("renewing a replica's hold leases", () => {
  it("leaves the holds a settlement is deleting to it, where waiting for them deadlocked", async () => {
    const [first, second] = ["gen-lease-a", "gen-lease-b"];
    await holdOf(db, first);
    await holdOf(db, second);
    let renewal: Promise<number> | undefined;
    // The ledger settles a batch of generations in one transaction, deleting their holds in its own order.
    await db.transaction(async (tx) => {
      await tx.query(`DELETE FROM identity.holds WHERE generation_id = $1`, [second]);
      renewal = renewHolds(db, owner, 30_000);
      await Promise.race([renewal, lockWaited()]);
      await tx.query(`DELETE FROM identity.holds WHERE generation_id = $1`, [first]);
    });
    expect(await renewal).toBe(1);
    expect(await db.query(`SELECT generation_id FROM identity.holds WHERE owner = $1`, [owner])).toEqual([]);
  });
});
