import { migrate, openPglite, type Db } from "@switchyard/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrations, schema } from "../migrations.js";
import { holdRequest as request, organizationWithKeys } from "../../../../tests/support/identity-keys.js";
import { placeHold } from "./holds.js";

const [unlimited, limited] = ["e".repeat(64), "f".repeat(64)];

let db: Db;
beforeAll(async () => {
  db = await openPglite();
  await migrate(db, schema, migrations);
  await organizationWithKeys(db, [[unlimited, null], [limited, "1"]]);
}, 60_000);
afterAll(async () => {
  await db?.close();
});

/**
 * The database with every statement's text noted: a Db of its own, so it gets a batcher of its own. It
 * calls itself Postgres: on an embedded database unbound holds live in memory (see memory-holds.ts), and
 * these tests are of the rows replicas share, written by the same statements on both.
 */
function counted() {
  const statements: string[] = [];
  const wrapped: Db = {
    ...db,
    kind: "postgres",
    query: (text, params) => (statements.push(text), db.query(text, params)),
    transaction: (fn) => db.transaction(fn),
  };
  return { wrapped, batches: () => statements.filter((text) => text.includes("jsonb_to_recordset")).length };
}

const heldAmounts = async (ids: readonly string[]) =>
  Object.fromEntries(
    (await db.query<{ generation_id: string; amount: string }>(`SELECT generation_id, amount::text FROM identity.holds WHERE generation_id IN (SELECT unnest($1::text[]))`, [ids])).map((row) => [
      row.generation_id,
      row.amount,
    ]),
  );

describe("holds no limit applies to", () => {
  it("writes those that arrive together in one statement, each granted and kept", async () => {
    const { wrapped, batches } = counted();
    const requests = Array.from({ length: 20 }, () => request(unlimited, "0.01", { owner: "replica-a", lease_ms: 30_000 }));
    const decisions = await Promise.all(requests.map((r) => placeHold(wrapped, r)));
    expect(decisions).toEqual(requests.map(() => ({ granted: true })));
    expect(batches()).toBeGreaterThan(0);
    expect(batches()).toBeLessThan(20);
    const rows = await db.query<{ n: number; leased: number; owner: string }>(
      `SELECT count(*)::int AS n, count(lease_until)::int AS leased, min(owner) AS owner FROM identity.holds WHERE generation_id IN (SELECT unnest($1::text[]))`,
      [requests.map((r) => r.generation_id)],
    );
    expect(rows).toEqual([{ n: 20, leased: 20, owner: "replica-a" }]);
  });

  it("decides each request of a batch on its own: limited keys still get their limit checked", async () => {
    const { wrapped } = counted();
    const requests = [
      request(unlimited, "5"),
      request(limited, "0.5"),
      request(unlimited, "5"),
      request(limited, "2"),
      // BYOK spend counts against this key's limit only when it says so, and it does not.
      request(limited, "2", { is_byok: true }),
    ];
    const decisions = await Promise.all(requests.map((r) => placeHold(wrapped, r)));
    expect(decisions.map((d) => d.granted)).toEqual([true, true, true, false, true]);
    expect(decisions[3]).toMatchObject({ limited_by: "key" });
    const ids = requests.map((r) => r.generation_id);
    expect(Object.keys(await heldAmounts(ids)).sort()).toEqual([ids[0], ids[1], ids[2], ids[4]].sort());
  });

  it("fails only the request that fails, when a batch does", async () => {
    const { wrapped } = counted();
    // numeric(24, 12) holds less than a trillion.
    const requests = [request(unlimited, "0.01"), request(unlimited, "1000000000000000"), request(unlimited, "0.02")];
    const outcomes = await Promise.allSettled(requests.map((r) => placeHold(wrapped, r)));
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(Object.keys(await heldAmounts(requests.map((r) => r.generation_id)))).toHaveLength(2);
  });

  it("writes one generation asked twice at once in turn, so the later amount stays", async () => {
    const { wrapped } = counted();
    const first = request(unlimited, "0.01");
    const second = { ...first, amount_usd: "0.03" };
    const others = Array.from({ length: 3 }, () => request(unlimited, "0.01"));
    const decisions = await Promise.all([first, ...others, second].map((r) => placeHold(wrapped, r)));
    expect(decisions.every((d) => d.granted)).toBe(true);
    expect(await heldAmounts([first.generation_id])).toEqual({ [first.generation_id]: "0.030000000000" });
  });
});
