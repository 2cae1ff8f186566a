import { migrate, openPglite, openPostgres, type Db } from "@switchyard/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rateLimitMigrations } from "../services/router/src/limits/rate-limiter.js";
import { sharedRateLimiter } from "../services/router/src/limits/shared-rate-limiter.js";
import { createTestDatabase, type TestDatabase } from "./support/postgres.js";

let database: TestDatabase;
let db: Db;

beforeAll(async () => {
  database = await createTestDatabase();
  db = database.url ? openPostgres({ url: database.url }) : await openPglite();
  await migrate(db, "router", rateLimitMigrations);
});
afterAll(async () => {
  await db.close();
  await database.drop();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const minuteStart = Math.floor(Date.now() / 60_000 + 10) * 60_000; // a minute in the future, never crossed here

describe("rate limits shared by router replicas", () => {
  it("admits the limit across two replicas, each seeing the other's hits after an exchange", async () => {
    let t = minuteStart;
    const now = () => t;
    const a = sharedRateLimiter(db, { syncMs: 20, now });
    const b = sharedRateLimiter(db, { syncMs: 20, now });
    try {
      let admitted = 0;
      // Turns of five requests per replica, with time for an exchange in between.
      for (let turn = 0; turn < 6; turn++) {
        for (const replica of [a, b]) {
          for (let i = 0; i < 5; i++) if ((await replica.hit("key-1", 20)).allowed) admitted++;
          await sleep(60);
          t += 10;
        }
      }
      expect(admitted).toBe(20);
      const refused = await a.hit("key-1", 20);
      expect(refused.allowed).toBe(false);
      expect(refused.retryAfterSeconds).toBeGreaterThan(0);
      // Other keys are counted apart.
      expect((await b.hit("key-2", 20)).allowed).toBe(true);
    } finally {
      await a.close();
      await b.close();
    }
    const [row] = await db.query<{ count: number }>("SELECT count FROM router.rate_windows WHERE key_hash = 'key-1' AND window_start = $1", [minuteStart / 60_000]);
    expect(row?.count).toBe(20); // refused requests are not counted
  });

  it("overshoots by no more than what one replica admits between two exchanges", async () => {
    let t = minuteStart + 1000;
    const now = () => t;
    const a = sharedRateLimiter(db, { syncMs: 50, now });
    const b = sharedRateLimiter(db, { syncMs: 50, now });
    try {
      // Both replicas learn the key, then each admits what it thinks is left before they exchange.
      await a.hit("key-3", 10);
      await b.hit("key-3", 10);
      let admitted = 2;
      for (let i = 0; i < 20; i++) for (const replica of [a, b]) if ((await replica.hit("key-3", 10)).allowed) admitted++;
      expect(admitted).toBeGreaterThanOrEqual(10);
      expect(admitted).toBeLessThanOrEqual(20);
      await sleep(150);
      t += 10;
      expect((await a.hit("key-3", 10)).allowed).toBe(false);
      expect((await b.hit("key-3", 10)).allowed).toBe(false);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it("counts hits that are on their way to the shared figure while the exchange runs", async () => {
    const now = () => minuteStart + 2000;
    let release: (() => void) | undefined;
    let armed = false;
    // The periodic exchange waits on a gate: a hit arriving meanwhile must still see the hits it carries.
    const gated: Db = {
      ...db,
      async query(sql, params) {
        if (armed && release === undefined && sql.includes("WITH hit AS")) {
          await new Promise<void>((resolve) => (release = resolve));
        }
        return db.query(sql, params);
      },
    };
    const limiter = sharedRateLimiter(gated, { syncMs: 10, now });
    try {
      const first = [];
      for (let i = 0; i < 3; i++) {
        first.push((await limiter.hit("key-4", 3)).allowed);
        armed = true;
      }
      expect(first).toEqual([true, true, true]);
      // The first sight exchanged at once; the next two now travel in a gated exchange.
      while (!release) await sleep(5);
      expect((await limiter.hit("key-4", 3)).allowed).toBe(false);
      release();
    } finally {
      release?.();
      await limiter.close();
    }
  });

  it("adds hits admitted just before a minute ended to that minute", async () => {
    let t = minuteStart + 3000;
    const now = () => t;
    // No periodic exchange in this test: only the first sight of each minute and close exchange.
    const limiter = sharedRateLimiter(db, { syncMs: 600_000, now });
    const countOf = async (window: number) =>
      (await db.query<{ count: number }>("SELECT count FROM router.rate_windows WHERE key_hash = 'key-5' AND window_start = $1", [window]))[0]?.count;
    try {
      for (let i = 0; i < 3; i++) expect((await limiter.hit("key-5", 10)).allowed).toBe(true);
      t = minuteStart + 60_000 + 10;
      // The next minute's first sight; the two hits not yet sent belong to the minute before.
      expect((await limiter.hit("key-5", 10)).allowed).toBe(true);
    } finally {
      await limiter.close();
    }
    expect(await countOf(minuteStart / 60_000)).toBe(3);
    expect(await countOf(minuteStart / 60_000 + 1)).toBe(1);
  });
});
