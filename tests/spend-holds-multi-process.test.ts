import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testEnv } from "./support/config.js";
import { eventually } from "./support/eventually.js";
import { startTestNats, type TestNats } from "./support/nats.js";
import { createTestDatabase, type TestDatabase } from "./support/postgres.js";
import { spendHelpers } from "./support/spend-scenarios.js";
import { spendTopologyStartupMs, startSpendTopology, type SpendTopology } from "./support/spend-topology.js";

/**
 * Spend holds owned by the inference replica that took them: one replica renews a 2 s lease, the other a
 * ten-minute one. Killed with SIGKILL, the first's holds are freed by identity's reaper within seconds;
 * the second's by that replica itself when it starts again. Holds are read from identity's table, so this
 * needs the shared Postgres.
 */
let nats: TestNats;
let database: TestDatabase;
let topology: SpendTopology;
let h: ReturnType<typeof spendHelpers>;
const shortLeaseMs = 2000;

/** Open holds of a key, with the port of the replica that owns each (null: no owner). */
async function holdsOf(keyHash: string): Promise<Array<number | null>> {
  const client = new pg.Client({ connectionString: database.url! });
  await client.connect();
  try {
    // to_jsonb: a schema without owners reads as null owners rather than failing.
    const { rows } = await client.query<{ owner: string | null }>(`SELECT to_jsonb(h) ->> 'owner' AS owner FROM identity.holds h WHERE key_hash = $1`, [keyHash]);
    return rows.map((r) => (r.owner === null ? null : Number(r.owner.slice(r.owner.lastIndexOf(":") + 1))));
  } finally {
    await client.end();
  }
}

describe.skipIf(!testEnv.databaseUrl)("spend holds of inference replicas that die", () => {
  beforeAll(async () => {
    nats = await startTestNats();
    database = await createTestDatabase();
    topology = await startSpendTopology({
      natsUrl: nats.url,
      databaseUrl: database.url,
      env: {
        identity: { SPEND_HOLD_REAP_MS: "250", SPEND_HOLD_LEASE_MS: String(shortLeaseMs) },
        replicas: [{ SPEND_HOLD_LEASE_MS: String(shortLeaseMs) }, { SPEND_HOLD_LEASE_MS: "600000" }],
      },
    });
    h = spendHelpers(topology.driver);
  }, spendTopologyStartupMs);

  afterAll(async () => {
    const codes = await topology?.stop();
    await nats?.stop();
    await database?.drop();
    expect(codes).toEqual([0, 0, 0, 0, 0]); // the restarted replicas drain cleanly too
  });

  it("frees a killed replica's holds by lease or at its restart, not at their deadline, and renews them while it lives", async () => {
    const { key, hash } = await h.newKey({ limit: 1 });
    const [short, long] = topology.replicaPorts as [number, number];
    // Streams that the provider never answers, opened until each replica runs one: new connections take turns.
    const streams: AbortController[] = [];
    const open = async () => {
      const aborter = new AbortController();
      streams.push(aborter);
      const res = await fetch(`${topology.apiUrl}/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "spend/stalling", messages: [{ role: "user", content: "hi" }], stream: true }),
        signal: aborter.signal,
      });
      expect(res.status).toBe(200);
      // Read like a waiting client would, until the test aborts it.
      void res.body?.pipeTo(new WritableStream()).catch(() => {});
    };
    try {
      for (let i = 0; i < 8; i++) {
        const before = (await holdsOf(hash)).length;
        await open();
        await eventually(async () => (await holdsOf(hash)).length === before + 1, 10_000);
        const owners = await holdsOf(hash);
        if (owners.includes(short) && owners.includes(long)) break;
      }
      const owners = await holdsOf(hash);
      expect(owners).toContain(short);
      expect(owners).toContain(long);
      // Their worst cases bind: a limit just above them leaves a cent request unaffordable.
      const limit = Number((owners.length * 0.01 + 0.005).toFixed(3));
      expect((await topology.driver.call("PATCH", `/keys/${hash}`, { limit })).status).toBe(200);
      expect((await h.chat(key, "spend/cent")).status).toBe(402);

      // Renewed while the replica lives: well past its 2 s lease, its holds are all still there.
      await new Promise((resolve) => setTimeout(resolve, 3 * shortLeaseMs));
      expect(await holdsOf(hash)).toEqual(owners);

      for (const replica of topology.replicas) replica.child.kill("SIGKILL");
      await Promise.all(topology.replicas.map((r) => new Promise((resolve) => (r.child.exitCode !== null || r.child.signalCode !== null ? resolve(null) : r.child.once("exit", resolve)))));
      // The short lease lapses and identity's reaper frees those holds within seconds (not 15 minutes)...
      await eventually(async () => !(await holdsOf(hash)).includes(short), 20_000);
      // ...while the ten-minute lease still holds the other replica's.
      expect((await holdsOf(hash)).filter((o) => o === long)).toHaveLength(owners.filter((o) => o === long).length);

      // That replica, started again, frees what its previous run held before it serves.
      await topology.restartReplica(1);
      expect(await holdsOf(hash)).toEqual([]);
      await topology.restartReplica(0);
      expect((await h.chat(key, "spend/cent")).status).toBe(200);
    } finally {
      for (const aborter of streams) aborter.abort();
    }
  }, 180_000);
});
