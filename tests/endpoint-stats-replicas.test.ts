import { endpointStatsResponse } from "@switchyard/contracts";
import { createInternalClient, createServiceSigner } from "@switchyard/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testEnv } from "./support/config.js";
import { eventually } from "./support/eventually.js";
import { pacedCatalog, startPacedProvider, type PacedProvider } from "./support/fake-paced.js";
import { createTestDatabase, type TestDatabase } from "./support/postgres.js";
import { startTestNats, type TestNats } from "./support/nats.js";
import { chatsServed, spendTopologyStartupMs, startSpendTopology, type SpendTopology } from "./support/spend-topology.js";

const paces = {
  fast: { firstTokenMs: 100, tokensPerSecond: 200, tokens: 20 },
  slow: { firstTokenMs: 400, tokensPerSecond: 50, tokens: 20 },
};
const replicaEnv = { ENDPOINT_STATS_INTERVAL_MS: "250" };

// Replicas share their statistics through the database they share: embedded PGlite is one process's alone.
describe.skipIf(!testEnv.databaseUrl)("endpoint statistics across two inference replicas", () => {
  let nats: TestNats;
  let database: TestDatabase;
  let upstream: PacedProvider;
  let topology: SpendTopology;

  beforeAll(async () => {
    nats = await startTestNats();
    database = await createTestDatabase();
    upstream = await startPacedProvider(paces);
    topology = await startSpendTopology({ natsUrl: nats.url, databaseUrl: database.url, catalog: () => pacedCatalog(upstream.baseUrl), env: { replicas: [replicaEnv, replicaEnv] } });
  }, spendTopologyStartupMs);
  afterAll(async () => {
    await topology?.stop();
    await upstream?.stop();
    await database?.drop();
    await nats?.stop();
  });

  it("adds up both replicas' generations, so both and the endpoint listing show the same figures", async () => {
    const key = String(((await topology.driver.call("POST", "/keys", { name: "stats" })).body as { key: string }).key);
    const before = topology.replicas.map(chatsServed);
    // Concurrent requests open several connections, which the round robin spreads over the replicas.
    for (let round = 0; round < 3; round++) {
      const sent = ["fast", "slow", "fast", "slow", "fast", "slow"].map((only) =>
        topology.driver.call("POST", "/chat/completions", { model: "paced/m", messages: [{ role: "user", content: "Hi" }], provider: { only: [only] } }, key),
      );
      for (const res of await Promise.all(sent)) expect(res.status).toBe(200);
    }
    expect(topology.replicas.map((r, i) => chatsServed(r) - before[i]!).every((n) => n > 0)).toBe(true);

    const signer = createServiceSigner(topology.internalSecret, "catalog");
    const statsOf = async (port: number) =>
      (await createInternalClient(`http://127.0.0.1:${port}`, signer).post("/internal/endpoint-stats", {}, endpointStatsResponse))!.data.sort((a, b) => a.provider.localeCompare(b.provider));
    // Each replica counted only what it served; once both have written and read, each sees all 18.
    await eventually(async () => {
      const [one, two] = await Promise.all(topology.replicaPorts.map(statsOf));
      return JSON.stringify(one) === JSON.stringify(two) && one!.length === 2;
    }, 15_000);
    const [stats] = await Promise.all(topology.replicaPorts.map(statsOf));
    for (const s of stats!) {
      const pace = paces[s.provider as keyof typeof paces];
      // Buffered answers: the first output is the whole answer, after the last token.
      const whole = pace.firstTokenMs + ((pace.tokens - 1) * 1000) / pace.tokensPerSecond;
      expect(s.latency_last_30m!.p50 / whole).toBeGreaterThan(0.8);
      expect(s.latency_last_30m!.p50 / whole).toBeLessThan(1.2);
      expect(s.uptime_last_5m).toBe(100);
    }
    const listed = await topology.driver.call("GET", "/models/paced/m/endpoints", undefined, key);
    const endpoints = (listed.body as { data: { endpoints: Array<Record<string, unknown>> } }).data.endpoints;
    for (const s of stats!) {
      expect(endpoints.find((e) => e.tag === s.provider)).toMatchObject({ latency_last_30m: s.latency_last_30m, throughput_last_30m: s.throughput_last_30m, uptime_last_1d: 100 });
    }
  });
});
