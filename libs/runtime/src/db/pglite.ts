import { mkdir } from "node:fs/promises";
import { PGlite } from "@electric-sql/pglite";
import type { Logger } from "../log.js";
import { preparedQueries } from "./pglite-prepared.js";
import { startPgliteVacuum } from "./pglite-vacuum.js";
import type { Db, Queryable } from "./types.js";

/**
 * Embedded Postgres for standalone mode and tests without a server.
 * `dataDir` undefined keeps the database in memory.
 */
export async function openPglite(dataDir?: string, options: { logger?: Logger } = {}): Promise<Db> {
  if (dataDir) await mkdir(dataDir, { recursive: true });
  const pg = await PGlite.create(dataDir ? { dataDir } : {});
  const vacuum = startPgliteVacuum(pg, options);
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
    async close() {
      await vacuum.stop();
      await pg.close();
    },
  };
}
