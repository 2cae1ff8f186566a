import { PGlite } from "@electric-sql/pglite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { maintainDueTables, startPgliteVacuum, statisticsTarget } from "./pglite-vacuum.js";

let pg: PGlite;

beforeAll(async () => {
  pg = await PGlite.create();
  await pg.exec(`
    CREATE SCHEMA app;
    CREATE TABLE app.churned (id int PRIMARY KEY, v text);
    CREATE TABLE app.updated (id int PRIMARY KEY, v text);
    CREATE TABLE app.quiet (id int PRIMARY KEY, v text);
  `);
  for (const table of ["churned", "updated", "quiet"]) await pg.query(`INSERT INTO app.${table} SELECT g, 'x' FROM generate_series(1, 1000) g`);
  // Everything is vacuumed and analyzed once, so that only what follows counts.
  await flushStats();
  await maintainDueTables(pg);
});
afterAll(() => pg.close());

/** Statistics reach the shared counters at most once a second unless forced. */
async function flushStats() {
  await pg.query("SELECT pg_stat_force_next_flush()");
  await pg.query("SELECT 1");
}

const stats = async (table: string) =>
  (
    await pg.query<{ n_dead_tup: number; vacuums: number; analyzes: number }>(
      `SELECT n_dead_tup::int, vacuum_count::int AS vacuums, analyze_count::int AS analyzes FROM pg_stat_user_tables WHERE schemaname = 'app' AND relname = $1`,
      [table],
    )
  ).rows[0]!;

describe("PGlite maintenance", () => {
  it("vacuums the tables with many dead rows, analyzes the ones that changed enough, and leaves the rest", async () => {
    await pg.query("DELETE FROM app.churned WHERE id <= 600"); // 600 dead rows against 400 live: due
    await pg.query("UPDATE app.updated SET v = 'y' WHERE id <= 200"); // 200 dead of 1000: under 50 + 20%, but 200 changes are over 50 + 10%
    await pg.query("DELETE FROM app.quiet WHERE id <= 10");
    await flushStats();
    const before = { churned: await stats("churned"), updated: await stats("updated"), quiet: await stats("quiet") };
    expect(before.churned.n_dead_tup).toBe(600);

    const done = (await maintainDueTables(pg)).filter((t) => t.name.startsWith("app."));
    expect(done).toEqual([
      { name: "app.churned", vacuum: true, analyze: true },
      { name: "app.updated", vacuum: false, analyze: true },
    ]);
    await flushStats();
    const churned = await stats("churned");
    expect(churned.n_dead_tup).toBe(0);
    expect(churned.vacuums).toBe(before.churned.vacuums + 1);
    expect((await stats("updated")).analyzes).toBe(before.updated.analyzes + 1);
    expect(await stats("quiet")).toEqual(before.quiet);
    expect((await maintainDueTables(pg)).filter((t) => t.name.startsWith("app."))).toEqual([]);
  });

  it("analyzes with statistics target 10: a 3000-row sample, histograms of 11 bounds", async () => {
    await pg.query("CREATE TABLE app.grown (id int PRIMARY KEY)");
    await pg.query("INSERT INTO app.grown SELECT g FROM generate_series(1, 20000) g");
    await flushStats();
    expect(await maintainDueTables(pg)).toContainEqual({ name: "app.grown", vacuum: true, analyze: true });
    const { rows } = await pg.query<{ bounds: number }>(
      `SELECT array_length(histogram_bounds::text::int[], 1) AS bounds FROM pg_stats WHERE schemaname = 'app' AND tablename = 'grown' AND attname = 'id'`,
    );
    expect(rows[0]?.bounds).toBe(statisticsTarget + 1);
  });

  it("runs passes on its timer and waits for the one under way when stopped", async () => {
    await pg.query("DELETE FROM app.churned WHERE id <= 900");
    await flushStats();
    const vacuums = (await stats("churned")).vacuums;
    const vacuum = startPgliteVacuum(pg, { everyMs: 20 });
    const deadline = Date.now() + 5000;
    while ((await stats("churned")).vacuums === vacuums && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      await flushStats();
    }
    await vacuum.stop();
    expect((await stats("churned")).vacuums).toBe(vacuums + 1);
  });
});
