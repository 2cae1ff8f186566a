import { randomBytes } from "node:crypto";
import type { ResolvedEndpoint } from "@switchyard/contracts";
import { connectNatsBus, silentLogger } from "@switchyard/runtime";
import { startSharedHealth } from "@switchyard/upstream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { eventually } from "./support/eventually.js";
import { startFakeProvider, type Behavior, type FakeProvider } from "./support/fake-provider.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";
import { startTestNats } from "./support/nats.js";
import { createTestDatabase } from "./support/postgres.js";
import { chatsServed, spendTopologyStartupMs, startSpendTopology } from "./support/spend-topology.js";

const cooldownMs = 6000;
const messages = [{ role: "user", content: "Hi" }];
const endpoint = (provider: string, upstream: string) => ({ provider, upstream_model: upstream, pricing: { prompt: "0.000001", completion: "0.000001" } });
/** Two providers on one fake: alpha's endpoint is `upstream` (the fake's behaviour), beta's answers. */
const flakyCatalog = (baseUrl: string, upstream = "flaky") => ({
  providers: [
    { slug: "alpha", name: "Alpha", adapter: "openai-compatible", base_url: baseUrl, requires_api_key: false },
    { slug: "beta", name: "Beta", adapter: "openai-compatible", base_url: baseUrl, requires_api_key: false },
  ],
  models: [{ id: "flaky/m", name: "Flaky", context_length: 8000, endpoints: [endpoint("alpha", upstream), endpoint("beta", "ok")] }],
});

describe("endpoints that keep failing, in one process", () => {
  let gw: TestGateway;
  let fake: FakeProvider;
  let key: string;
  let alphaFails = true;

  beforeAll(async () => {
    fake = await startFakeProvider("fake", (model): Behavior => (model === "flaky" ? (alphaFails ? "fail-500" : "ok") : (model as Behavior)));
    gw = await startTestGateway({ ...(await catalogEnv(flakyCatalog(fake.baseUrl))), UPSTREAM_FAILURE_COOLDOWN_MS: String(cooldownMs) });
    key = String((await gw.call("POST", "/keys", { body: { name: "health" } })).body.key);
  });
  afterAll(async () => {
    await gw?.stop();
    await fake?.stop();
  });

  const flakyCalls = () => fake.requests.filter((r) => r.body.model === "flaky").length;
  const served = async () => {
    const res = await gw.call("POST", "/chat/completions", { key, body: { model: "flaky/m", messages, provider: { order: ["alpha", "beta"] } } });
    expect(res.status).toBe(200);
    return ((await gw.call("GET", `/generation?id=${String(res.body.id)}`, { key })).body.data as unknown as { provider_name: string }).provider_name;
  };

  it("go behind healthy ones for the cool-down, and one probe lets them back", async () => {
    const sent = Date.now();
    expect(await served()).toBe("beta");
    // The endpoint failed between these two instants, and rests from then.
    const failedBy = Date.now();
    expect(flakyCalls()).toBe(1);
    // While it rests, requests that prefer it go to beta without calling it.
    for (let i = 0; i < 3; i++) expect(await served()).toBe("beta");
    if (Date.now() - sent < cooldownMs) expect(flakyCalls()).toBe(1);

    // It has recovered; once the cool-down has passed, the next request probes it and it serves again.
    alphaFails = false;
    await new Promise((r) => setTimeout(r, Math.max(0, failedBy + cooldownMs + 100 - Date.now())));
    expect(await served()).toBe("alpha");
    expect(await served()).toBe("alpha");
    expect(flakyCalls()).toBe(3);
  });
});

describe("endpoint health across replicas", () => {
  it("is shared by two inference replicas: the second does not try what the first saw fail", async () => {
    const nats = await startTestNats();
    const database = await createTestDatabase();
    const topology = await startSpendTopology({ natsUrl: nats.url, databaseUrl: database.url, catalog: (url) => flakyCatalog(url, "fail-500") });
    try {
      const key = String(((await topology.driver.call("POST", "/keys", { name: "health" })).body as { key: string }).key);
      const call = () => topology.driver.call("POST", "/chat/completions", { model: "flaky/m", messages, provider: { order: ["alpha", "beta"] } }, key);
      const flakyCalls = () => topology.upstream.requests.filter((r) => r.body.model === "fail-500").length;
      expect((await call()).status).toBe(200);
      expect(flakyCalls()).toBe(1);
      // The replica that saw the failure tells the other over NATS.
      const told = () => topology.replicas.some((r) => r.output().includes("endpoint health shared by another replica"));
      await eventually(async () => told(), 10_000);
      // Requests reach both replicas (the round robin spreads concurrent ones); neither tries the failing endpoint again while it rests.
      const before = topology.replicas.map(chatsServed);
      const answers = await Promise.all(Array.from({ length: 6 }, call));
      for (const answer of answers) expect(answer.status).toBe(200);
      const served = () => topology.replicas.map((r, i) => chatsServed(r) - before[i]!);
      await eventually(async () => served().reduce((a, b) => a + b) >= 6, 10_000);
      for (const n of served()) expect(n).toBeGreaterThan(0);
      expect(flakyCalls()).toBe(1);
    } finally {
      await topology.stop();
      await nats.stop();
      await database.drop();
    }
  }, spendTopologyStartupMs + 60_000);

  it("keeps each replica's own view while NATS is down", async () => {
    const nats = await startTestNats({ private: true });
    const bus = await connectNatsBus({ url: nats.url, namespace: `health${randomBytes(4).toString("hex")}`, logger: silentLogger() });
    const timeouts = { firstByteMs: 1000, idleMs: 1000, failureCooldownMs: 60_000 };
    const health = await startSharedHealth({ bus, subject: "inference.endpoint.health.v1", logger: silentLogger(), timeouts });
    try {
      await nats.kill!();
      await eventually(async () => !bus.healthy(), 10_000);
      const a = { provider: "alpha", upstream_model: "m" } as ResolvedEndpoint;
      // Nothing throws or waits on the bus; this replica still orders the failed endpoint last.
      health.failed(a);
      expect(health.coolingDown(a)).toBe(true);
      health.succeeded(a);
      expect(health.coolingDown(a)).toBe(false);
    } finally {
      await health.stop();
      await bus.close();
      await nats.stop();
    }
  });
});

describe("a workspace's own key on a resting endpoint", () => {
  let gw: TestGateway;
  let fake: FakeProvider;
  let alphaFails = true;

  beforeAll(async () => {
    fake = await startFakeProvider("fake", (model): Behavior => (model === "flaky" ? (alphaFails ? "fail-500" : "ok") : (model as Behavior)));
    gw = await startTestGateway({
      ...(await catalogEnv(flakyCatalog(fake.baseUrl))),
      UPSTREAM_FAILURE_COOLDOWN_MS: String(60_000),
      SWITCHYARD_ENCRYPTION_KEY: "health-test-encryption-secret-0123456789",
    });
  });
  afterAll(async () => {
    await gw?.stop();
    await fake?.stop();
  });

  it("leaves the rest the operator's key earned when the workspace's key succeeds there", async () => {
    const operatorKey = String((await gw.call("POST", "/keys", { body: { name: "operator" } })).body.key);
    const workspace = await gw.call("POST", "/workspaces", { body: { name: "Own keys", slug: "own-keys" } });
    const workspaceId = String(workspace.body.data?.id);
    expect((await gw.call("PUT", `/workspaces/${workspaceId}/provider-keys/alpha`, { body: { key: "sk-own-alpha-1234" } })).status).toBe(200);
    const ownKey = String((await gw.call("POST", "/keys", { body: { name: "own", workspace_id: workspaceId } })).body.key);
    const flakyCalls = () => fake.requests.filter((r) => r.body.model === "flaky").length;
    const providerOf = async (key: string, provider: Record<string, unknown>) => {
      const res = await gw.call("POST", "/chat/completions", { key, body: { model: "flaky/m", messages, provider } });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      await eventually(async () => (await gw.call("GET", `/generation?id=${String(res.body.id)}`, { key })).status === 200, 5000);
      return ((await gw.call("GET", `/generation?id=${String(res.body.id)}`, { key })).body.data as unknown as { provider_name: string }).provider_name;
    };

    expect(await providerOf(operatorKey, { order: ["alpha", "beta"] })).toBe("beta");
    expect(flakyCalls()).toBe(1);
    // The endpoint answers again, and the workspace's own key is served by it.
    alphaFails = false;
    expect(await providerOf(ownKey, { only: ["alpha"] })).toBe("alpha");
    expect(fake.requests.at(-1)!.authorization).toBe("Bearer sk-own-alpha-1234");
    // The operator's key still waits out its rest: its requests go to beta without calling alpha.
    expect(await providerOf(operatorKey, { order: ["alpha", "beta"] })).toBe("beta");
    expect(flakyCalls()).toBe(2);
  });
});
