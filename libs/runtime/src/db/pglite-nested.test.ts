import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPglite } from "./pglite.js";
import type { Db } from "./types.js";

let db: Db;
beforeAll(async () => {
  db = await openPglite();
  await db.query("CREATE TABLE t (v int)");
});
afterAll(() => db.close());

const rows = async () => (await db.query<{ v: number }>("SELECT v FROM t ORDER BY v")).map((r) => r.v);

describe("embedded database, one connection for every service", () => {
  it("runs a transaction or statement begun inside an open transaction in it, instead of waiting for it", async () => {
    await db.query("DELETE FROM t");
    await db.transaction(async (tx) => {
      await tx.query("INSERT INTO t VALUES (1)");
      // What another service does in-process while the first one's transaction is open.
      await db.transaction((inner) => inner.query("INSERT INTO t VALUES (2)"));
      expect((await db.query<{ n: number }>("SELECT count(*)::int AS n FROM t"))[0]!.n).toBe(2);
    });
    expect(await rows()).toEqual([1, 2]);
  });

  it("rolls the joined work back with the transaction it joined", async () => {
    await db.query("DELETE FROM t");
    await expect(
      db.transaction(async (tx) => {
        await tx.query("INSERT INTO t VALUES (1)");
        await db.transaction((inner) => inner.query("INSERT INTO t VALUES (2)"));
        throw new Error("changed its mind");
      }),
    ).rejects.toThrow("changed its mind");
    expect(await rows()).toEqual([]);
  });

  it("runs work a transaction left running on its own once the transaction ended", async () => {
    await db.query("DELETE FROM t");
    let later: Promise<unknown> = Promise.resolve();
    await db.transaction(async (tx) => {
      await tx.query("INSERT INTO t VALUES (1)");
      later = new Promise((resolve) => setTimeout(resolve, 50)).then(() => db.query("INSERT INTO t VALUES (2)"));
    });
    await later;
    expect(await rows()).toEqual([1, 2]);
  });
});
