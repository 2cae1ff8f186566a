import { mkdir, writeFile } from "node:fs/promises";
import { activity, dailyActivity, identityMigrations, identitySchema, listGenerations, recordCharges } from "@switchyard/identity";
import { migrate, openPostgres, type Db, type Queryable } from "@switchyard/runtime";
import { charges, models, tenants, type Charge, type Tenants } from "./activity-data.js";
import { cleanup, cleanupOnSignals, onCleanup } from "./cleanup.js";
import { benchConfig } from "./config.js";
import { freshDatabase } from "./database.js";
import { markdown, percentile } from "./measure.js";
import { seeded } from "./seeded.js";

/**
 * The operator's activity reads at scale: a fresh Postgres database filled with `BENCH_ACTIVITY_GENERATIONS`
 * generations (1M by default) over 60 days through `recordCharges`, as identity's ledger consumer writes
 * them, vacuumed and analyzed (as autovacuum would leave them), then each read of `/activity`,
 * `/activity/daily` and `/generations` timed warm for the busiest organization. Prints p50 and max per
 * query beside the goal (a 30-day read or a page under 100 ms); never fails on slowness.
 * `BENCH_ACTIVITY_EXPLAIN=1` also prints each query's plan.
 */

const config = benchConfig.activity;
const dayMs = 86_400_000;
const days = 60;
const goalMs = 100;
const warmupRuns = 3;

interface Case {
  name: string;
  /** Held to the goal: 30-day reads and pages of the list. */
  goal: boolean;
  run: (db: Queryable) => Promise<number>;
}

interface Timing {
  query: string;
  rows: number;
  "p50 ms": number;
  "max ms": number;
  goal: string;
  verdict: string;
}

/** Fills the ledger and its rollups `batch` events per `recordCharges` call, the next batch drawn while the last is written. */
async function fill(db: Db, who: Tenants, count: number, end: number) {
  const random = seeded(2024);
  const started = performance.now();
  let written = 0;
  let reported = started;
  let pending: Promise<number> | undefined;
  let batch: Charge[] = [];
  const flush = async () => {
    const size = batch.length;
    await pending;
    pending = recordCharges(db, batch);
    batch = [];
    written += size;
    const now = performance.now();
    if (now - reported > 15_000) {
      reported = now;
      console.log(`  ${written.toLocaleString("en")} of ${count.toLocaleString("en")} (${Math.round(written / ((now - started) / 1000))}/s)`);
    }
  };
  for (const event of charges(who, count, end - days * dayMs, end, random)) {
    batch.push(event);
    if (batch.length >= config.batch) await flush();
  }
  if (batch.length) await flush();
  await pending;
  return (performance.now() - started) / 1000;
}

/** How many rows of what the fill wrote, and their size on disk, for the printout. */
async function tableSizes(db: Queryable) {
  const sizes = [];
  for (const table of ["ledger", "activity_days", "activity_key_days", "activity_timings"]) {
    const [row] = await db.query<{ rows: number; size: string }>(
      `SELECT count(*)::int AS rows, pg_size_pretty(pg_total_relation_size('${identitySchema}.${table}')) AS size FROM ${identitySchema}.${table}`,
    );
    sizes.push({ table, rows: row?.rows ?? 0, "with indexes": row?.size ?? "" });
  }
  return sizes;
}

/** The queries timed, for the organization of interest. */
async function cases(db: Queryable, who: Tenants, now: number): Promise<Case[]> {
  const org = who.organizationId;
  const day = (ago: number) => new Date(now - ago * dayMs).toISOString().slice(0, 10);
  const busyKey = who.keys[0]!.hash;
  const quietKey = who.keys.at(-1)!.hash;
  const model = models[8]!.id;
  let page20 = "";
  for (let page = 1; page < 20; page++) {
    const next: string | null = (await listGenerations(db, org, { limit: 50, ...(page20 ? { cursor: page20 } : {}) })).next_cursor;
    if (!next) throw new Error("fewer than 20 pages of generations: fill more");
    page20 = next;
  }
  const rangeEnd = new Date(Math.floor(now / dayMs - 10) * dayMs);
  const range = { from: new Date(rangeEnd.getTime() - dayMs).toISOString(), to: rangeEnd.toISOString() };
  const list = (name: string, query: Parameters<typeof listGenerations>[2]): Case => ({
    name: `listGenerations ${name}`,
    goal: true,
    run: async (q) => (await listGenerations(q, org, { limit: 50, ...query })).data.length,
  });
  return [
    { name: "activity 30 days", goal: true, run: async (q) => (await activity(q, org, {})).length },
    { name: "activity 30 days, group_by workspace", goal: true, run: async (q) => (await activity(q, org, { group_by: "workspace" })).length },
    { name: "activity 30 days, api_key_hash (busiest key)", goal: true, run: async (q) => (await activity(q, org, { api_key_hash: busyKey })).length },
    { name: "dailyActivity 30 days", goal: true, run: async (q) => (await dailyActivity(q, org, { from: day(29), to: day(0) })).length },
    { name: "dailyActivity 30 days by model", goal: true, run: async (q) => (await dailyActivity(q, org, { from: day(29), to: day(0), group_by: "model" })).length },
    { name: "dailyActivity 30 days by key", goal: true, run: async (q) => (await dailyActivity(q, org, { from: day(29), to: day(0), group_by: "key" })).length },
    { name: "dailyActivity 60 days by model", goal: false, run: async (q) => (await dailyActivity(q, org, { from: day(59), to: day(0), group_by: "model" })).length },
    list("first page", {}),
    list(`model ${model}`, { model }),
    list("status error", { status: "error" }),
    list("api_key_hash (busiest key)", { api_key_hash: busyKey }),
    list("api_key_hash (quietest key)", { api_key_hash: quietKey }),
    list("one day, 10 days ago", range),
    list("20th page (cursor)", { cursor: page20 }),
  ];
}

/** Runs `run` a few times untimed, then `config.runs` times timed, one after the other. */
async function time(db: Queryable, c: Case): Promise<Timing> {
  let rows = 0;
  for (let i = 0; i < warmupRuns; i++) rows = await c.run(db);
  const ms: number[] = [];
  for (let i = 0; i < config.runs; i++) {
    const started = performance.now();
    await c.run(db);
    ms.push(performance.now() - started);
  }
  ms.sort((a, b) => a - b);
  const p50 = percentile(ms, 50);
  return {
    query: c.name,
    rows,
    "p50 ms": p50,
    "max ms": ms.at(-1)!,
    goal: c.goal ? `< ${goalMs} ms` : "none (60 days)",
    verdict: c.goal ? (p50 < goalMs ? "met" : "not met") : "-",
  };
}

/** A Queryable that answers nothing and keeps, for each statement, its `EXPLAIN (ANALYZE, BUFFERS)`. */
function explaining(db: Queryable, plans: string[][]): Queryable {
  return {
    async query<T extends object>(text: string, params?: readonly unknown[]): Promise<T[]> {
      const rows = await db.query<{ "QUERY PLAN": string }>(`EXPLAIN (ANALYZE, BUFFERS) ${text}`, params);
      plans.push(rows.map((r) => r["QUERY PLAN"]));
      return [];
    },
  };
}

/** A plan without its planning block: the nodes, their conditions, buffers and the execution time. */
const summary = (plan: string[]) => plan.filter((line, i) => !/^Planning/.test(line) && !(/^\s+Buffers/.test(line) && /^Planning:/.test(plan[i - 1] ?? "")));

async function main() {
  const database = await freshDatabase(config.databaseUrl, `switchyard_bench_activity_${process.pid}`);
  onCleanup(() => database.drop());
  const db = openPostgres({ url: database.url, applicationName: "bench-activity", maxConnections: 4 });
  onCleanup(() => db.close());
  await migrate(db, identitySchema, identityMigrations);

  const who = tenants(seeded(7));
  const end = Date.now();
  console.log(
    `Filling ${config.generations.toLocaleString("en")} generations over ${days} days through recordCharges, ${config.batch} events a call ` +
      `(${who.organizationIds.length} organizations, ${who.keys.length} keys in the one measured, ${models.length} models)`,
  );
  const fillSeconds = await fill(db, who, config.generations, end);
  const fillRate = Math.round(config.generations / fillSeconds);
  console.log(`Filled in ${fillSeconds.toFixed(1)} s: ${fillRate} generations/s`);
  // The rollups' upserts leave a dead row per update; autovacuum clears them in a running deployment.
  const analyzeStarted = performance.now();
  await db.query("VACUUM ANALYZE");
  const [autovacuum] = await db.query<{ autovacuum: string }>("SHOW autovacuum");
  console.log(`VACUUM ANALYZE: ${((performance.now() - analyzeStarted) / 1000).toFixed(1)} s (the server's autovacuum is ${autovacuum?.autovacuum})`);
  const sizes = await tableSizes(db);
  console.log(`\n${markdown(sizes)}\n`);
  const [share] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${identitySchema}.ledger WHERE organization_id = $1`, [who.organizationId]);
  console.log(`Measured organization: ${share?.n.toLocaleString("en")} generations; ${config.runs} timed runs per query after ${warmupRuns} untimed, one at a time\n`);

  const timings: Timing[] = [];
  const plans: Array<{ query: string; plans: string[][] }> = [];
  for (const c of await cases(db, who, Date.now())) {
    timings.push(await time(db, c));
    if (config.explain) {
      const kept: string[][] = [];
      await c.run(explaining(db, kept));
      plans.push({ query: c.name, plans: kept });
    }
  }
  console.log(markdown(timings.map((t) => ({ ...t }))));
  const missed = timings.filter((t) => t.verdict === "not met");
  console.log(`\nGoal (p50 under ${goalMs} ms for 30-day reads and list pages): ${missed.length ? `not met by ${missed.map((t) => t.query).join("; ")}` : "met by all"}`);
  for (const p of plans) {
    for (const [i, plan] of p.plans.entries()) console.log(`\nEXPLAIN ${p.query}${p.plans.length > 1 ? ` (statement ${i + 1} of ${p.plans.length})` : ""}\n${summary(plan).join("\n")}`);
  }

  const results = new URL("../results/", import.meta.url);
  await mkdir(results, { recursive: true });
  const file = new URL("activity-aggregates.json", results);
  const fillResult = { generations: config.generations, days, batch: config.batch, seconds: fillSeconds, per_second: fillRate, via: "recordCharges" };
  await writeFile(file, JSON.stringify({ date: new Date().toISOString(), fill: fillResult, tables: sizes, runs: config.runs, timings, plans }, null, 2));
  console.log(`\nResults: ${file.pathname}`);
}

cleanupOnSignals();
try {
  await main();
} finally {
  await cleanup();
}
