import { randomUUID } from "node:crypto";
import { migrate, openDatabase, type Db, type Queryable } from "@switchyard/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { organizationWithKeys } from "../../../../tests/support/identity-keys.js";
import { testEnv } from "../../../../tests/support/config.js";
import { createTestDatabase, type TestDatabase } from "../../../../tests/support/postgres.js";
import { migrations, schema } from "../migrations.js";
import { deleteExpiredHolds } from "./holds.js";
import { detachOwnerHolds, reapLapsedHolds, releaseOwnerHolds, renewHolds } from "./leases.js";

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

/** A hold of the replica: leased for another 30 s, or `lapsed` (its lease and its deadline long past). */
const holdOf = (db: Queryable, generationId: string, lapsed = false) =>
  db.query(
    `INSERT INTO identity.holds (generation_id, key_hash, guardrail_ids, amount, is_byok, expires_at, owner, lease_until, organization_id)
     SELECT $1, $2, '{}', 0.01, false, now() + make_interval(mins => $4), $3, now() + make_interval(secs => $4 * 30), organization_id
     FROM identity.api_keys WHERE hash = $2`,
    [generationId, key, owner, lapsed ? -10 : 1],
  );

/** Resolves once a statement of this database waits for a row lock, or after two seconds. */
async function lockWaited(): Promise<void> {
  for (let tries = 0; tries < 100; tries++) {
    const [row] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`);
    if (row!.n > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Two holds of the replica, of which a settlement (the ledger deletes a batch of generations' holds in one
 * transaction, in its own order) deletes the second, then `sweep` runs, then the settlement deletes the first
 * and commits. Returns what the sweep returned; both holds are gone.
 */
async function besideSettlement(sweep: () => Promise<number>, lapsed: boolean): Promise<number> {
  const [first, second] = [`gen-${randomUUID()}`, `gen-${randomUUID()}`];
  await holdOf(db, first, lapsed);
  await holdOf(db, second, lapsed);
  let swept: Promise<number> | undefined;
  await db.transaction(async (tx) => {
    await tx.query(`DELETE FROM identity.holds WHERE generation_id = $1`, [second]);
    swept = sweep();
    await Promise.race([swept, lockWaited()]);
    await tx.query(`DELETE FROM identity.holds WHERE generation_id = $1`, [first]);
  });
  expect(await db.query(`SELECT generation_id FROM identity.holds WHERE generation_id IN ($1, $2)`, [first, second])).toEqual([]);
  return swept!;
}

// Replicas share the rows on Postgres alone; an embedded database has one connection, which cannot deadlock.
describe.skipIf(!testEnv.databaseUrl)("statements on the holds of several generations, beside a settlement", () => {
  it("renews the leases of the holds it can lock, where waiting for the others deadlocked", async () => {
    expect(await besideSettlement(() => renewHolds(db, owner, 30_000), false)).toBe(1);
  });

  it("frees the holds of a replica's previous run that it can lock", async () => {
    expect(await besideSettlement(() => releaseOwnerHolds(db, owner), false)).toBe(1);
  });

  it("detaches the holds of a draining replica that it can lock", async () => {
    expect(await besideSettlement(() => detachOwnerHolds(db, owner), false)).toBe(1);
  });

  it("reaps the lapsed holds it can lock", async () => {
    expect(await besideSettlement(() => reapLapsedHolds(db), true)).toBe(1);
  });

  it("deletes the expired holds it can lock", async () => {
    expect(await besideSettlement(() => deleteExpiredHolds(db), true)).toBe(1);
  });
});
