import { AsyncLocalStorage } from "node:async_hooks";
import { mkdir } from "node:fs/promises";
import { setFlagsFromString } from "node:v8";
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
 * Has V8 compile the WebAssembly of databases opened from now on with its optimising compiler alone, for a
 * server that keeps its database open for its whole life. By default V8 first compiles all of PGlite's 9 MB
 * module with its baseline compiler (Liftoff) and then the functions that run often with the optimising one.
 * Compiled that way, a standalone gateway on the development VM held 35–65 MB less after start and 30–100 MB
 * less at its peak under load, at the same CPU per request, and took 1.3–1.6 s longer to start (3.4 s on
 * Node 24). A process-wide V8 setting, read when a module is compiled: the short-lived databases of tests
 * that never call it keep the quicker start.
 */
export const compileWasmOptimisedOnly = (): void => setFlagsFromString("--no-liftoff");

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
