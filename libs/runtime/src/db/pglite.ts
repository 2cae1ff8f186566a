import { mkdir } from "node:fs/promises";
import { PGlite } from "@electric-sql/pglite";
import { preparedQueries } from "./pglite-prepared.js";
import type { Db, Queryable } from "./types.js";

const vacuumEveryMs = 5 * 60 * 1000;

/**
 * Embedded Postgres for standalone mode and tests without a server.
 * `dataDir` undefined keeps the database in memory.
 */
export async function openPglite(dataDir?: string): Promise<Db> {
  if (dataDir) await mkdir(dataDir, { recursive: true });
  const pg = await PGlite.create(dataDir ? { dataDir } : {});
  // PGlite runs no autovacuum: without this, every update and delete leaves dead rows and index entries
  // behind for good, and the tables a gateway writes all day (outbox, holds, day sums) get slower by the hour.
  const vacuum = setInterval(() => void pg.query("VACUUM").catch(() => undefined), vacuumEveryMs);
  vacuum.unref();
  const prepared = preparedQueries(pg);
  const run = async <T extends object>(
    client: Pick<PGlite, "query">,
    text: string,
    params?: readonly unknown[],
  ): Promise<T[]> => (await client.query<T>(text, params as unknown[] | undefined)).rows;
  return {
    kind: "pglite",
    query: (text, params) => prepared(text, params),
    transaction: (fn) =>
      pg.transaction((tx) => {
        const handle: Queryable = { query: (text, params) => run(tx, text, params) };
        return fn(handle);
      }),
    async ping() {
      await pg.query("SELECT 1");
    },
    close: () => {
      clearInterval(vacuum);
      return pg.close();
    },
  };
}
