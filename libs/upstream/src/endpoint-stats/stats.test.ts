import { migrate, openPglite, openPostgres, silentLogger, type Db } from "@switchyard/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testEnv } from "../../../../tests/support/config.js";
import { createTestDatabase, type TestDatabase } from "../../../../tests/support/postgres.js";
import { add, bucketOf, percentiles, type Histogram } from "./histogram.js";
import { servedSample, startEndpointStats, type EndpointStats } from "./stats.js";
import { endpointStatsMigrations } from "./store.js";

describe("log-scaled histograms", () => {
  it("read percentiles back within a few percent of what was measured, at every magnitude", () => {
    for (const scale of [0.5, 40, 3_000, 250_000]) {
      const h: Histogram = {};
      const values = Array.from({ length: 1000 }, (_, i) => scale * (1 + i / 1000));
      for (const v of values) add(h, v);
      const p = percentiles(h)!;
      for (const [q, got] of Object.entries(p)) {
        const exact = values[Math.ceil(Number(q.slice(1)) / 100 * values.length) - 1]!;
        expect(Math.abs(got - exact) / exact).toBeLessThan(0.05);
      }
    }
  });

  it("ignores what is not a measurement and is null when empty", () => {
    const h: Histogram = {};
    for (const v of [Number.NaN, -1, Number.POSITIVE_INFINITY]) add(h, v);
    expect(percentiles(h)).toBeNull();
    expect(bucketOf(0)).toBe(0);
    expect(bucketOf(1e300)).toBe(bucketOf(1e200));
  });
});

describe("a served generation's sample", () => {
  it("times from the serving attempt: failed attempts before it are not its endpoint's", () => {
    const attempts = [
      { provider: "a", model: "m", status: 500, latencyMs: 300 },
      { provider: "b", model: "m", status: 200, latencyMs: 100 },
    ];
    expect(servedSample({ attempts, streamed: true, firstOutputMs: 500, generationMs: 1300, completionTokens: 80 })).toEqual({ firstOutputMs: 200, throughput: 100 });
    expect(servedSample({ attempts: attempts.slice(1), streamed: false, firstOutputMs: null, generationMs: 400, completionTokens: 40 })).toEqual({ firstOutputMs: 400, throughput: 100 });
    expect(servedSample({ attempts: attempts.slice(1), streamed: false, firstOutputMs: null, generationMs: 400, completionTokens: 0 }).throughput).toBeNull();
  });
});

const backends = [{ name: "PGlite", postgres: false }, ...(testEnv.databaseUrl ? [{ name: "Postgres", postgres: true }] : [])];

describe.each(backends)("endpoint statistics on $name", ({ postgres }) => {
  let database: TestDatabase | undefined;
  let db: Db;
  let schemas = 0;
  const minute = 60_000;

  beforeAll(async () => {
    if (postgres) {
      database = await createTestDatabase();
      db = openPostgres({ url: database.url! });
    } else db = await openPglite();
  });
  afterAll(async () => {
    await db?.close();
    await database?.drop();
  });

  /** Two replicas on one schema, on a clock the test moves. */
  async function replicas() {
    const schema = `endpoint_stats_${++schemas}`;
    await migrate(db, schema, endpointStatsMigrations(schema));
    const clock = { t: Date.UTC(2026, 0, 1, 12, 0, 0) };
    const start = () => startEndpointStats({ db, schema, logger: silentLogger(), bucketMs: minute, intervalMs: 3_600_000, now: () => clock.t });
    const pair: [EndpointStats, EndpointStats] = [start(), start()];
    const refresh = async () => {
      for (const r of pair) await r.refresh();
      // The second refresh of the first replica reads what the second one wrote after it.
      await pair[0].refresh();
    };
    return { clock, pair, refresh, stop: () => Promise.all(pair.map((r) => r.stop())) };
  }

  it("adds up every replica's measurements, and both replicas read the same figures", async () => {
    const { pair, refresh, stop } = await replicas();
    try {
      for (let i = 0; i < 100; i++) {
        const replica = pair[i % 2]!;
        replica.attempted("fast", "v/m", true);
        replica.served("fast", "v/m", { firstOutputMs: 200, throughput: 80 });
      }
      for (let i = 0; i < 10; i++) pair[1].attempted("fast", "v/m", i >= 2);
      await refresh();
      const [one, two] = pair.map((r) => r.figures("fast", "v/m"));
      expect(one).toEqual(two);
      expect(one!.latency!.p50 / 200).toBeCloseTo(1, 1);
      expect(one!.throughput!.p99 / 80).toBeCloseTo(1, 1);
      expect(one!.uptime5m).toBeCloseTo((100 * 108) / 110, 2);
      expect(one!.recentAttempts).toBe(110);
      expect(pair[0].figures("slow", "v/m")).toBeUndefined();
    } finally {
      await stop();
    }
  });

  it("lets failures leave the 5-minute, 30-minute and recent windows as time passes, and the day's last", async () => {
    const { clock, pair, refresh, stop } = await replicas();
    try {
      for (let i = 0; i < 10; i++) pair[0].attempted("flaky", "v/m", false);
      await refresh();
      expect(pair[1].figures("flaky", "v/m")).toMatchObject({ uptime5m: 0, uptime30m: 0, uptime1d: 0, recentUptime: 0 });
      // Two minutes later the failing minute no longer counts as recent; successes now.
      clock.t += 2 * minute;
      for (let i = 0; i < 10; i++) pair[1].attempted("flaky", "v/m", true);
      await refresh();
      expect(pair[0].figures("flaky", "v/m")).toMatchObject({ uptime5m: 50, recentUptime: 100 });
      clock.t += 10 * minute;
      await refresh();
      expect(pair[0].figures("flaky", "v/m")).toMatchObject({ uptime5m: null, uptime30m: 50, recentUptime: null, latency: null });
      clock.t += 60 * minute;
      await refresh();
      expect(pair[0].figures("flaky", "v/m")).toMatchObject({ uptime30m: null, uptime1d: 50 });
      clock.t += 1440 * minute;
      await refresh();
      expect(pair[0].figures("flaky", "v/m")).toBeUndefined();
    } finally {
      await stop();
    }
  });
});
