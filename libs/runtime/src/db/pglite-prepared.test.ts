import { PGlite } from "@electric-sql/pglite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPglite } from "./pglite.js";
import type { Db } from "./types.js";

let db: Db;
let plain: PGlite;

beforeAll(async () => {
  db = await openPglite();
  plain = await PGlite.create();
  for (const target of [db.query.bind(db), (text: string) => plain.query(text)]) {
    await target("CREATE TABLE t (id text PRIMARY KEY, n integer, amount numeric(30, 12), tags text[], doc jsonb, at timestamptz)");
  }
});
afterAll(async () => {
  await db.close();
  await plain.close();
});

describe("PGlite queries prepared once per text", () => {
  it("answers as PGlite's own query does, for every parameter and column type used", async () => {
    const insert = "INSERT INTO t (id, n, amount, tags, doc, at) VALUES ($1, $2, $3, $4, $5, $6) RETURNING *";
    const rows = [
      ["a", 1, "0.000000000001", ["x", "y, z", "ünïcødé 😀"], { k: [1, "two"], s: "€ ∑ 😀" }, new Date("2026-01-02T03:04:05.678Z")],
      ["b", null, "12.5", [], null, null],
    ];
    for (const params of rows) {
      // Twice through the prepared path: the second run binds the statement prepared by the first.
      expect(await db.query(insert, params)).toEqual((await plain.query(insert, params)).rows);
    }
    const select = "SELECT * FROM t WHERE id = ANY($1::text[]) ORDER BY id";
    expect(await db.query(select, [["a", "b"]])).toEqual((await plain.query(select, [["a", "b"]])).rows);
    expect(await db.query("SELECT count(*)::int AS n, sum(amount)::text AS total FROM t")).toEqual([{ n: 2, total: "12.500000000001" }]);
  });

  it("throws the database's error, with its code, and the next query runs normally", async () => {
    await expect(db.query("INSERT INTO t (id) VALUES ($1)", ["a"])).rejects.toMatchObject({ code: "23505" });
    await expect(db.query("SELECT nonsense FROM t")).rejects.toMatchObject({ code: "42703" });
    expect(await db.query("SELECT id FROM t WHERE id = $1", ["a"])).toEqual([{ id: "a" }]);
  });

  it("prepares a statement again when its table changed shape", async () => {
    await db.query("CREATE TABLE shaped (id integer)");
    await db.query("INSERT INTO shaped VALUES (1)");
    const select = "SELECT * FROM shaped";
    expect(await db.query(select)).toEqual([{ id: 1 }]);
    await db.query("ALTER TABLE shaped ADD COLUMN label text DEFAULT 'new'");
    expect(await db.query(select)).toEqual([{ id: 1, label: "new" }]);
  });

  it("keeps working past the number of statements it keeps prepared", async () => {
    for (let i = 0; i < 250; i++) expect(await db.query(`SELECT ${i}::int AS i`)).toEqual([{ i }]);
    expect(await db.query("SELECT 0::int AS i")).toEqual([{ i: 0 }]);
    expect(await db.query("SELECT 249::int AS i")).toEqual([{ i: 249 }]);
  });

  it("waits for an open transaction instead of running inside it", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let inserted!: () => void;
    const insertedYet = new Promise<void>((resolve) => (inserted = resolve));
    const transaction = db
      .transaction(async (tx) => {
        await tx.query("INSERT INTO t (id) VALUES ('rolled back')");
        inserted();
        await gate;
        throw new Error("roll back");
      })
      .catch((error: Error) => error.message);
    await insertedYet;
    const count = db.query<{ n: number }>("SELECT count(*)::int AS n FROM t WHERE id = 'rolled back'");
    release();
    expect(await transaction).toBe("roll back");
    expect(await count).toEqual([{ n: 0 }]);
  });
});
