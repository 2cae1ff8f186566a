import { migrate, openPglite } from "@switchyard/runtime";
import { expect, it } from "vitest";
import { migrations, schema } from "./migrations.js";

// Each recorded generation writes every index of its table; a generation is read by its id alone.
it("writes generations under their primary key alone", async () => {
  const db = await openPglite();
  await migrate(db, schema, migrations);
  const indexes = await db.query<{ name: string }>("SELECT indexname AS name FROM pg_indexes WHERE schemaname = $1 AND tablename = 'generations'", [schema]);
  expect(indexes.map((index) => index.name)).toEqual(["generations_pkey"]);
  await db.close();
});
