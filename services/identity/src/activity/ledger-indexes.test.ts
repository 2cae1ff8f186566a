import { randomUUID } from "node:crypto";
import type { ListGenerationsQuery } from "@switchyard/contracts";
import { migrate, openPglite, type Db, type Queryable } from "@switchyard/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrations, schema } from "../migrations.js";
import { listGenerations } from "./generations.js";

/** Adds to `found` the index names a plan (EXPLAIN's JSON form) reads. */
function indexesOf(plan: unknown, found: Set<string>): void {
  if (Array.isArray(plan)) for (const item of plan) indexesOf(item, found);
  else if (typeof plan === "object" && plan !== null) {
    for (const [name, value] of Object.entries(plan)) {
      if (name === "Index Name" && typeof value === "string") found.add(value);
      else indexesOf(value, found);
    }
  }
}

/**
 * Every charge writes each of the ledger's indexes, so each one must be what a read of it uses; the
 * primary key is the charge's own (a charge reported again finds its row there).
 */
describe("the ledger's indexes", () => {
  let db: Db;

  beforeAll(async () => {
    db = await openPglite();
    await migrate(db, schema, migrations);
    // On an empty table the planner would scan it whole; this makes it say which index each read would use.
    await db.query("SET enable_seqscan = off");
  });
  afterAll(() => db.close());

  /** The indexes the generation list's statement for `query` reads. */
  async function readBy(query: ListGenerationsQuery): Promise<Set<string>> {
    const found = new Set<string>();
    const explaining: Queryable = {
      async query<T>(text: string, params?: readonly unknown[]) {
        const [row] = await db.query<Record<string, unknown>>(`EXPLAIN (FORMAT JSON) ${text}`, params);
        indexesOf(row ? Object.values(row)[0] : undefined, found);
        return [] as T[];
      },
    };
    await listGenerations(explaining, randomUUID(), query);
    return found;
  }

  it("are the generation list's, one for each way it is filtered", async () => {
    const reads = {
      newest: await readBy({}),
      byModel: await readBy({ model: "vendor/chat" }),
      failures: await readBy({ status: "error" }),
      byKey: await readBy({ api_key_hash: "a".repeat(64) }),
    };
    expect(reads).toEqual({
      newest: new Set(["ledger_by_organization"]),
      byModel: new Set(["ledger_by_model"]),
      failures: new Set(["ledger_failures"]),
      byKey: new Set(["ledger_by_key_started"]),
    });
    const indexes = await db.query<{ name: string }>(
      "SELECT indexname AS name FROM pg_indexes WHERE schemaname = $1 AND tablename = 'ledger' AND indexname <> 'ledger_pkey' ORDER BY 1",
      [schema],
    );
    const read = new Set(Object.values(reads).flatMap((names) => [...names]));
    expect(indexes.map((index) => index.name)).toEqual([...read].sort());
  });
});
