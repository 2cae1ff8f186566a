import { AsyncLocalStorage } from "node:async_hooks";
import { mkdir } from "node:fs/promises";
import { PGlite } from "@electric-sql/pglite";
import type { Logger } from "../log.js";
import { createCluster } from "./pglite-init.js";
import { preparedQueries } from "./pglite-prepared.js";
import { startPgliteVacuum } from "./pglite-vacuum.js";
import type { Db, Queryable } from "./types.js";

/**
 * PGlite's own settings, and a buffer pool of 32 MB instead of Postgres' 128 MB: the pool lives in the
 * WebAssembly memory, which Postgres fills at start, so the smaller pool is about 100 MB less resident
 * memory from the first moment. A standalone gateway's working set (keys, holds, the latest generations
 * and their indexes) fits in it, and pages beyond it come from the operating system's file cache.
 */
const startParams = [...PGlite.defaultStartParams, "-c", "shared_buffers=32MB"];

/**
 * Embedded Postgres for standalone mode and tests without a server.
 * `dataDir` undefined keeps the database in memory.
 */
export async function openPglite(dataDir?: string, options: { logger?: Logger } = {}): Promise<Db> {
  if (dataDir) {
    await mkdir(dataDir, { recursive: true });
    await createCluster(dataDir);
  }
  const pg = await PGlite.create({ ...(dataDir ? { dataDir } : {}), startParams });
  const vacuum = startPgliteVacuum(pg, options);
  const prepared = preparedQueries(pg);
  const run = async <T extends object>(
    client: Pick<PGlite, "query">,
    text: string,
    params?: readonly unknown[],
  ): Promise<T[]> => (await client.query<T>(text, params as unknown[] | undefined)).rows;
  // One connection serves every service of the process, and a transaction holds it until it ends. So a
  // statement or transaction begun while one is open, by the code it runs (catalog's change calling identity
  // in-process), joins it instead of waiting for it forever: in one process, one transaction.
  const open = new AsyncLocalStorage<{ handle: Queryable; open: boolean }>();
  const joined = () => {
    const current = open.getStore();
    return current?.open ? current.handle : undefined;
  };
  return {
    kind: "pglite",
    query: (text, params) => joined()?.query(text, params) ?? prepared(text, params),
    transaction: (fn) => {
      const outer = joined();
      if (outer) return fn(outer);
      return pg.transaction((tx) => {
        const current = { handle: { query: (text, params) => run(tx, text, params) } as Queryable, open: true };
        // Work the transaction started and left running afterwards must not use its handle once it ended.
        return open.run(current, () => fn(current.handle)).finally(() => {
          current.open = false;
        });
      });
    },
    async ping() {
      await pg.query("SELECT 1");
    },
    async close() {
      await vacuum.stop();
      await pg.close();
    },
  };
}
