import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "./support/eventually.js";
import { startTestNats, type TestNats } from "./support/nats.js";
import { createTestDatabase, type TestDatabase } from "./support/postgres.js";
import { chargesOnceHoweverDelivered, spendHelpers } from "./support/spend-scenarios.js";
import { chatsServed, spendTopologyStartupMs, startSpendTopology, type SpendTopology } from "./support/spend-topology.js";

/**
 * The faults of spend-faults.test.ts with router, identity, catalog and two inference replicas as separate
 * processes, over a NATS of this test's own that it kills and restarts: usage arrives once, whatever the
 * transport does.
 */
let nats: TestNats;
let database: TestDatabase;
let topology: SpendTopology;
let h: ReturnType<typeof spendHelpers>;

beforeAll(async () => {
  nats = await startTestNats({ private: true });
  database = await createTestDatabase();
  topology = await startSpendTopology({ natsUrl: nats.url, databaseUrl: database.url });
  h = spendHelpers(topology.driver);
}, spendTopologyStartupMs);

afterAll(async () => {
  const codes = await topology?.stop();
  await nats?.stop();
  await database?.drop();
  // Checked after cleaning up, so a failed start leaves no NATS server or database behind.
  expect(codes).toEqual([0, 0, 0, 0, 0]); // every process drained cleanly on SIGTERM, NATS outage or not
});

/**
 * A key's charges written to the outbox the replicas share on Postgres and not yet published: how many, how
 * many a relay claims now, and how many a relay failed to publish.
 */
async function unpublishedCharges(url: string, keyHash: string): Promise<{ unpublished: number; claimed: number; failed: number }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const [row] = (
      await client.query<{ unpublished: number; claimed: number; failed: number }>(
        `SELECT count(*)::int AS unpublished, count(*) FILTER (WHERE claimed_until > now())::int AS claimed,
           count(*) FILTER (WHERE attempts > 0)::int AS failed
         FROM inference.outbox
         WHERE published_at IS NULL AND subject = 'inference.generation.completed.v1' AND data->>'key_hash' = $1`,
        [keyHash],
      )
    ).rows;
    return row!;
  } finally {
    await client.end();
  }
}
const usageOf = async (hash: string) => (await h.keyRecord(hash)).usage;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("spend across processes when NATS fails", () => {
  it("binds a limit set while NATS is down on the next request, whichever replica serves it", async () => {
    const { key, hash } = await h.newKey();
    // Both replicas serve the key while it has no limit. (First in this file: no replica has been restarted
    // yet, so the router's pooled connections reach both.)
    const warm = await topology.driver.burst(10, () => Promise.all(Array.from({ length: 10 }, () => h.chat(key, "spend/cent"))));
    expect(warm.map((a) => a.status)).toEqual(Array(10).fill(200));
    await nats.kill!();
    try {
      // Half a cent: no replica learns of it by event, and a cent request must still be refused.
      expect((await topology.driver.call("PATCH", `/keys/${hash}`, { limit: 0.005 })).status).toBe(200);
      const before = topology.driver.upstreamCalls("cent");
      const answers = await topology.driver.burst(10, () => Promise.all(Array.from({ length: 10 }, () => h.chat(key, "spend/cent"))));
      expect(answers.filter((a) => a.status === 402 || a.status === 403)).toHaveLength(10);
      expect(topology.driver.upstreamCalls("cent") - before).toBe(0);
    } finally {
      await nats.restart!();
    }
  }, 60_000);

  it("binds a guardrail budget set while NATS is down, counting the key's spend of the day and what replicas that resolved the key before spent", async () => {
    const { key, hash } = await h.newKey();
    // Both replicas resolve the key while no guardrail applies to it, and keep that resolution.
    const warm = await topology.driver.burst(10, () => Promise.all(Array.from({ length: 10 }, () => h.chat(key, "spend/cent"))));
    expect(warm.map((a) => a.status)).toEqual(Array(10).fill(200));
    await h.usageReaches(hash, 0.1);
    await nats.kill!();
    let id: string;
    try {
      // The key's ten cents of today count against its budget: two and a half cents are left.
      const created = await topology.driver.call("POST", "/guardrails", { name: "twelve and a half cents", limit_usd: 0.125, reset_interval: "daily" });
      expect(created.status).toBe(201);
      id = String(h.data(created).id);
      expect((await topology.driver.call("POST", `/guardrails/${id}/assignments/keys`, { key_hashes: [hash] })).status).toBe(200);
      const before = topology.driver.upstreamCalls("cent");
      const answers = await topology.driver.burst(10, () => Promise.all(Array.from({ length: 10 }, () => h.chat(key, "spend/cent"))));
      expect(answers.filter((a) => a.status === 200)).toHaveLength(2);
      expect(answers.filter((a) => a.status === 402)).toHaveLength(8);
      expect(answers.find((a) => a.status === 402)?.body.error?.message).toContain(`guardrail ${id}`);
      expect(topology.driver.upstreamCalls("cent") - before).toBe(2);
    } finally {
      await nats.restart!();
    }
    // The two charges name no guardrail (their replicas had resolved the key before it had one); they are the
    // key's spend all the same, so once settled half a cent is left, too little for a cent.
    await eventually(async () => ((await usageOf(hash)) ?? 0) >= 0.12, 45_000);
    const after = await h.chat(key, "spend/cent");
    expect(after.status).toBe(402);
    expect(after.body.error?.message).toContain(`guardrail ${id}`);
  }, 90_000);

  it("serves 20 completions on both replicas while NATS is down and applies their usage exactly once when it returns", async () => {
    const { key, hash } = await h.newKey({ limit: 1 });
    await nats.kill!();
    // Holds go to identity over HTTP; each replica's outbox keeps its generations' events until NATS is back.
    const answers = await topology.driver.burst(20, () => Promise.all(Array.from({ length: 20 }, () => h.chat(key, "spend/cent"))));
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    await sleep(300);
    expect(await usageOf(hash)).toBe(0); // the charges wait in the outboxes; their holds still count meanwhile
    expect((await h.keyRecord(hash)).limit_remaining).toBe(1);

    await nats.restart!();
    // The outbox relays back off up to 10 s while NATS is away, and identity's durable consumer restarts with
    // a backoff of its own: generous, but bounded.
    await eventually(async () => ((await usageOf(hash)) ?? 0) >= 0.2, 45_000);
    await sleep(500);
    expect(await h.keyRecord(hash)).toMatchObject({ usage: 0.2, limit_remaining: 0.8 });
  }, 75_000);

  it("keeps the charges of a replica killed during the outage in its outbox and applies them once when it is back", async () => {
    const { key, hash } = await h.newKey({ limit: 1 });
    const victim = topology.replicas[0]!;
    const logMark = victim.output().length;
    await nats.kill!();
    const before = chatsServed(victim);
    const answers = await topology.driver.burst(20, () => Promise.all(Array.from({ length: 20 }, () => h.chat(key, "spend/cent"))));
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    expect(chatsServed(victim) - before).toBeGreaterThan(0); // it has charges of its own to lose

    if (database.url) {
      // One outbox for both replicas: every charge has been written, none published.
      await eventually(async () => (await unpublishedCharges(database.url!, hash)).unpublished === 20, 5000);
    }
    // Its relay has claimed charges, waited out the 5 s NATS request timeout and let go of them: by then its
    // records, written GENERATION_FLUSH_MS (50 ms) after each answer, are all in its outbox. Killed now, with
    // its next try 500 ms away, it leaves no 30 s claim that would hold them back (the wait below allows for one).
    // It warns at the first failure of a streak, so a streak left from the outage before (a publish that failed
    // again as NATS came back) says nothing new; the shared outbox's rows say it all the same: a failed try
    // recorded, and no claim held.
    const letGo = async () => {
      if (database.url === undefined) return false;
      const charges = await unpublishedCharges(database.url, hash);
      return charges.unpublished === 20 && charges.failed > 0 && charges.claimed === 0;
    };
    await eventually(async () => victim.output().slice(logMark).includes("outbox relay could not publish") || (await letGo()), 20_000);
    const killed = new Promise((resolve) => victim.child.once("exit", (_code, signal) => resolve(signal)));
    victim.child.kill("SIGKILL");
    expect(await killed).toBe("SIGKILL");
    expect(await usageOf(hash)).toBe(0);

    await nats.restart!();
    // An inference process cannot start while NATS is down, so the replica comes back after it: the same
    // port and data folder (its own PGlite, or the shared Postgres).
    await topology.restartReplica(0);
    await eventually(async () => ((await usageOf(hash)) ?? 0) >= 0.2, 45_000);
    await sleep(500);
    expect(await h.keyRecord(hash)).toMatchObject({ usage: 0.2, limit_remaining: 0.8 });
  }, 75_000);

  it("applies a charge once however often it is delivered or reported", () => chargesOnceHoweverDelivered(topology.driver, { url: nats.url, namespace: topology.namespace }), 30_000);
});
