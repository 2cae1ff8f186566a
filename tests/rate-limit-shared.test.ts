import { migrate, openPglite, openPostgres, type Db } from "@switchyard/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rateLimitMigrations, RateLimitUnavailableError } from "../services/router/src/limits/rate-limiter.js";
import { sharedRateLimiter } from "../services/router/src/limits/shared-rate-limiter.js";
import { testEnv } from "./support/config.js";
import { eventually } from "./support/eventually.js";
import { startFaultProxy } from "./support/fault-proxy.js";
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

const minuteStart = Math.floor(Date.now() / 60_000 + 10) * 60_000; // a minute in the future, never crossed by the clock here

/** The database, counting the lease statements sent through it. */
function counting(inner: Db) {
  const counter = { leases: 0 };
  const wrapped: Db = {
    ...inner,
    query: (sql, params) => {
      if (sql.includes("router.rate_grant")) counter.leases++;
      return inner.query(sql, params);
    },
  };
  return { db: wrapped, counter };
}

const countOf = async (key: string, window: number) =>
  (await db.query<{ count: number }>("SELECT count FROM router.rate_windows WHERE key_hash = $1 AND window_start = $2", [key, window]))[0]?.count;

describe("rate limits shared by router replicas", () => {
  it("admits 60 to 66 of a 60/min limit across three replicas firing at once, with a round trip per slice, not per request", async () => {
    const t = minuteStart + 1000;
    const { db: watched, counter } = counting(db);
    const replicas = [0, 1, 2].map(() => sharedRateLimiter(watched, { now: () => t }));
    try {
      // Concurrent bursts, and then requests one at a time in turn: both must stay within the bound.
      const burst = await Promise.all(replicas.flatMap((r) => Array.from({ length: 60 }, () => r.hit("key-burst", 60))));
      const burstAdmitted = burst.filter((d) => d.allowed).length;
      expect(burstAdmitted).toBeGreaterThanOrEqual(60);
      expect(burstAdmitted).toBeLessThanOrEqual(66);

      const before = counter.leases;
      let admitted = 0;
      for (let i = 0; i < 90; i++) if ((await replicas[i % 3]!.hit("key-turns", 60)).allowed) admitted++;
      expect(admitted).toBeGreaterThanOrEqual(60);
      expect(admitted).toBeLessThanOrEqual(66);
      // Slices of an eighth of what is left: about 20 leases for 60 requests, and one refusal per replica.
      expect(counter.leases - before).toBeLessThan(35);

      // Refused replicas answer from what they learnt: no statement per refused request.
      const leasesBeforeRefusals = counter.leases;
      for (const r of replicas) {
        for (let i = 0; i < 20; i++) {
          const refused = await r.hit("key-turns", 60);
          expect(refused.allowed).toBe(false);
          expect(refused.retryAfterSeconds).toBeGreaterThan(0);
        }
      }
      expect(counter.leases).toBe(leasesBeforeRefusals);
    } finally {
      await Promise.all(replicas.map((r) => r.close()));
    }
  });

  it("leases slices of one when the limit is small: 5/min over three replicas admits 5, spread over the replicas", async () => {
    const t = minuteStart + 2000;
    const replicas = [0, 1, 2].map(() => sharedRateLimiter(db, { now: () => t }));
    try {
      const admittedBy = [0, 0, 0];
      for (let i = 0; i < 15; i++) if ((await replicas[i % 3]!.hit("key-small", 5)).allowed) admittedBy[i % 3]!++;
      // A slice of more than one would let the first replica take more than its turns.
      expect(admittedBy).toEqual([2, 2, 1]);
      const burst = await Promise.all(replicas.flatMap((r) => Array.from({ length: 10 }, () => r.hit("key-small-burst", 5))));
      expect(burst.filter((d) => d.allowed)).toHaveLength(5);
    } finally {
      await Promise.all(replicas.map((r) => r.close()));
    }
  });

  it("gives unused slices back when the minute ends, so the next minute weighs only admitted requests", async () => {
    let t = minuteStart + 3000;
    const now = () => t;
    const a = sharedRateLimiter(db, { now, tickMs: 20 });
    const b = sharedRateLimiter(db, { now, tickMs: 20 });
    try {
      for (let i = 0; i < 3; i++) expect((await a.hit("key-turn", 40)).allowed).toBe(true);
      for (let i = 0; i < 2; i++) expect((await b.hit("key-turn", 40)).allowed).toBe(true);
      expect(await countOf("key-turn", minuteStart / 60_000)).toBeGreaterThan(5); // leased, not all used
      t = minuteStart + 60_000 + 30_000;
      await eventually(async () => (await countOf("key-turn", minuteStart / 60_000)) === 5, 5000);
      // Half of the previous minute's 5 still weighs: floor(40 − 2.5) = 37 this minute, not floor(40 − 5) = 35.
      let admitted = 0;
      for (let i = 0; i < 50; i++) if ((await (i % 2 ? a : b).hit("key-turn", 40)).allowed) admitted++;
      expect(admitted).toBe(37);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it("takes a changed limit at once, even after a refusal", async () => {
    const limiter = sharedRateLimiter(db, { now: () => minuteStart + 4000 });
    try {
      expect((await limiter.hit("key-raised", 1)).allowed).toBe(true);
      expect((await limiter.hit("key-raised", 1)).allowed).toBe(false);
      expect((await limiter.hit("key-raised", 3)).allowed).toBe(true);
    } finally {
      await limiter.close();
    }
  });

  it("takes a lowered limit at once: what is left of a slice leased under the old one stops admitting and goes back", async () => {
    const limiter = sharedRateLimiter(db, { now: () => minuteStart + 5000 });
    try {
      expect((await limiter.hit("key-lowered", 1200)).allowed).toBe(true);
      let admitted = 0;
      for (let i = 0; i < 10; i++) if ((await limiter.hit("key-lowered", 2)).allowed) admitted++;
      expect(admitted).toBe(1);
      expect(await countOf("key-lowered", Math.floor(minuteStart / 60_000))).toBe(2);
      // Raised again, the minute's allowance counts only what was admitted.
      admitted = 0;
      for (let i = 0; i < 10; i++) if ((await limiter.hit("key-lowered", 5)).allowed) admitted++;
      expect(admitted).toBe(3);
    } finally {
      await limiter.close();
    }
  });

  it.skipIf(!testEnv.databaseUrl)("fails requests that need a slice as unavailable while Postgres is out of reach, and recovers", async () => {
    const url = new URL(database.url!);
    const proxy = await startFaultProxy({ host: url.hostname, port: Number(url.port || 5432) });
    url.host = `127.0.0.1:${proxy.port}`;
    const viaProxy = openPostgres({ url: url.toString() });
    const limiter = sharedRateLimiter(viaProxy, { now: () => minuteStart + 5000 });
    try {
      expect((await limiter.hit("key-outage", 60)).allowed).toBe(true); // leases a slice of 8
      await proxy.cut();
      // The slice already held keeps admitting without Postgres.
      for (let i = 0; i < 7; i++) expect((await limiter.hit("key-outage", 60)).allowed).toBe(true);
      for (let i = 0; i < 20; i++) {
        const error = await limiter.hit("key-outage", 60).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(RateLimitUnavailableError);
        expect((error as RateLimitUnavailableError).retryAfterSeconds).toBeGreaterThan(0);
      }
      await proxy.restore();
      await eventually(async () => (await limiter.hit("key-outage", 60).catch(() => ({ allowed: false }))).allowed, 10_000);
    } finally {
      await limiter.close();
      await viaProxy.close();
      await proxy.stop();
    }
  });
});
