import type { PGlite } from "@electric-sql/pglite";
import type { Logger } from "../log.js";

/** What one pass found due: a table (`schema.name`, quoted) to vacuum, to analyze, or both. */
export interface DueTable {
  name: string;
  vacuum: boolean;
  analyze: boolean;
}

/**
 * Tables due for maintenance by Postgres's own autovacuum rules and defaults: dead rows above 50 + 20% of
 * the live ones, rows inserted since the last vacuum above 1000 + 20% (so insert-only tables get their
 * visibility map, and their rows frozen, a little at a time), rows changed since the last analyze above
 * 50 + 10%, or a transaction id older than `vacuum_freeze_table_age`, when a vacuum also freezes. System
 * catalogs are included: the database's oldest transaction id is theirs too.
 */
const dueQuery = `
SELECT name, vacuum, "analyze" FROM (
  SELECT format('%I.%I', s.schemaname, s.relname) AS name,
    (s.n_dead_tup > 50 + 0.2 * s.n_live_tup
      OR s.n_ins_since_vacuum > 1000 + 0.2 * s.n_live_tup
      OR age(c.relfrozenxid) > 150000000) AS vacuum,
    (s.n_mod_since_analyze > 50 + 0.1 * s.n_live_tup) AS "analyze"
  FROM pg_stat_all_tables s JOIN pg_class c ON c.oid = s.relid
  WHERE c.relkind IN ('r', 'm')
) AS t
WHERE vacuum OR "analyze"
ORDER BY name`;

/**
 * The statistics target these analyzes use: a sample of 300 × 10 = 3000 rows per table (Postgres's default
 * before 8.4) instead of 30 000. Below 30 000 rows the default samples a whole table, so each analyze of a
 * young log table (generations, ledger) read all of it: 180 ms of CPU for 40 000 generations, on the only
 * connection, at every pass while the table grows; requests wait behind it. At 10 it is 20 ms.
 */
export const statisticsTarget = 10;

/** Vacuums and analyzes what is due, one table per statement so that queries waiting for the database go in between. */
export async function maintainDueTables(pg: Pick<PGlite, "query">): Promise<DueTable[]> {
  const { rows } = await pg.query<DueTable>(dueQuery);
  // Session-wide on PGlite's one connection, and nothing but this analyzes there.
  if (rows.some((table) => table.analyze)) await pg.query(`SET default_statistics_target = ${statisticsTarget}`);
  for (const table of rows) {
    const command = table.vacuum ? (table.analyze ? "VACUUM (ANALYZE)" : "VACUUM") : "ANALYZE";
    await pg.query(`${command} ${table.name}`);
  }
  return rows;
}

/**
 * PGlite runs no autovacuum: without one, every update and delete leaves dead rows and index entries behind
 * for good, planner statistics never follow the data, and transaction ids are never frozen. This checks
 * every `everyMs` what autovacuum would do and does it, so each pass covers only the changes since the last
 * one (a few milliseconds under load, one statistics query when idle) instead of a whole-database VACUUM
 * that held the single connection for hundreds of milliseconds every few minutes.
 */
export function startPgliteVacuum(pg: Pick<PGlite, "query">, options: { everyMs?: number; logger?: Logger } = {}) {
  let running: Promise<unknown> | undefined;
  let failures = 0;
  const timer = setInterval(() => {
    if (running) return;
    running = maintainDueTables(pg)
      .then((done) => {
        failures = 0;
        if (done.length > 0) options.logger?.debug({ tables: done.map((t) => t.name) }, "vacuumed and analyzed what was due");
      })
      .catch((error: unknown) => {
        if (failures++ % 60 === 0) options.logger?.warn({ err: error, failures }, "database maintenance (vacuum, analyze) failed; will retry");
      })
      .finally(() => (running = undefined));
  }, options.everyMs ?? 10_000);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
