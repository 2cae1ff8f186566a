import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testEnv } from "../../../../tests/support/config.js";
import { startFaultProxy } from "../../../../tests/support/fault-proxy.js";
import { createTestDatabase, type TestDatabase } from "../../../../tests/support/postgres.js";
import { openPostgres } from "./postgres.js";
import type { Db } from "./types.js";

/** The statements this session keeps prepared, and how often each ran (custom and generic plans together). */
const prepared = async (db: Db) =>
  db.query<{ statement: string; runs: number }>("SELECT statement, (custom_plans + generic_plans)::int AS runs FROM pg_prepared_statements ORDER BY prepare_time");

// One connection, so the session `pg_prepared_statements` shows is the one that ran the statements.
describe.skipIf(!testEnv.databaseUrl)("Postgres statements", () => {
  let database: TestDatabase;
  const opened: Db[] = [];
  const open = (preparedStatements?: boolean) => {
    const db = openPostgres({ url: database.url!, maxConnections: 1, ...(preparedStatements === undefined ? {} : { preparedStatements }) });
    opened.push(db);
    return db;
  };

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await Promise.all(opened.map((db) => db.close()));
    await database?.drop();
  });

  it("parses and plans a parameterised statement once per connection, in and out of transactions", async () => {
    const db = open();
    const text = "SELECT $1::int + 1 AS n";
    for (const value of [1, 2]) expect(await db.query(text, [value])).toEqual([{ n: value + 1 }]);
    expect(await db.transaction((tx) => tx.query(text, [3]))).toEqual([{ n: 4 }]);
    expect(await db.query("SELECT 1 AS one")).toEqual([{ one: 1 }]);
    expect((await prepared(db)).filter((row) => row.statement === text)).toEqual([{ statement: text, runs: 3 }]);
    // Statements without parameters stay in the simple protocol, as several statements in one text need.
    expect((await prepared(db)).some((row) => row.statement.includes("AS one"))).toBe(false);
  });

  it("prepares nothing when told not to", async () => {
    const db = open(false);
    expect(await db.query("SELECT $1::int + 1 AS n", [1])).toEqual([{ n: 2 }]);
    expect(await prepared(db)).toEqual([]);
  });

  it("runs a statement again when its table changed shape since it was prepared", async () => {
    const db = open();
    await db.query("CREATE TABLE shapes (a int)");
    await db.query("INSERT INTO shapes VALUES (1)");
    const text = "SELECT * FROM shapes WHERE a = $1";
    expect(await db.query(text, [1])).toEqual([{ a: 1 }]);
    await db.query("ALTER TABLE shapes ADD COLUMN b int DEFAULT 2");
    expect(await db.query(text, [1])).toEqual([{ a: 1, b: 2 }]);
    await db.query("ALTER TABLE shapes ADD COLUMN c int DEFAULT 3");
    // In a transaction the stale plan's error aborts it; the caller's next try prepares the statement anew.
    await expect(db.transaction((tx) => tx.query(text, [1]))).rejects.toMatchObject({ code: "0A000" });
    expect(await db.transaction((tx) => tx.query(text, [1]))).toEqual([{ a: 1, b: 2, c: 3 }]);
  });

  it("names the first 256 texts and runs the rest unnamed", async () => {
    const db = open();
    for (let i = 0; i < 300; i++) expect(await db.query(`SELECT $1::int AS n${i}`, [i])).toEqual([{ [`n${i}`]: i }]);
    const rows = await prepared(db);
    expect(rows).toHaveLength(256);
    expect(rows.at(-1)?.statement).toBe("SELECT $1::int AS n255");
  });

  it("fails a transaction whose connection broke, without an error nobody hears, and serves again once the server is back", async () => {
    const url = new URL(database.url!);
    const proxy = await startFaultProxy({ host: url.hostname, port: Number(url.port || 5432) });
    url.host = `127.0.0.1:${proxy.port}`;
    const db = openPostgres({ url: url.toString(), maxConnections: 1 });
    opened.push(db);
    // An 'error' event no listener hears ends the process: here it would be an uncaught exception.
    const unheard: unknown[] = [];
    const hear = (error: unknown) => unheard.push(error);
    process.prependListener("uncaughtException", hear);
    try {
      const sleeping = db.transaction((tx) => tx.query("SELECT pg_sleep(5)"));
      await new Promise((r) => setTimeout(r, 300));
      await proxy.cut();
      await expect(sleeping).rejects.toThrow();
      await new Promise((r) => setTimeout(r, 100));
      expect(unheard).toEqual([]);
      await proxy.restore();
      // The broken connection was not handed out again.
      expect(await db.transaction((tx) => tx.query("SELECT 1 AS one"))).toEqual([{ one: 1 }]);
    } finally {
      process.removeListener("uncaughtException", hear);
      await proxy.stop();
    }
  });
});
