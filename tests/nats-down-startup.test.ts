import { randomBytes } from "node:crypto";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { eventually } from "./support/eventually.js";
import { startFakeProvider, type FakeProvider } from "./support/fake-provider.js";
import { startTestNats, type TestNats } from "./support/nats.js";
import { startServiceProcesses, type ServiceProcesses } from "./support/service-processes.js";

/**
 * Identity, catalog, inference and the router as separate processes, started while their NATS (a private
 * server on a port of this test's own) is down, as pods rescheduled during an outage are: they start and
 * serve, and once NATS answers they make their streams and consumers and what waited in the outboxes arrives.
 */
const pricing = { prompt: "0.000001", completion: "0.000002" };
const namespace = `down${randomBytes(4).toString("hex")}`;

let upstream: FakeProvider;
let nats: TestNats;
let cluster: ServiceProcesses;
let key: string;
let hash: string;

const call = (path: string, bearer: string, init: { method?: string; body?: unknown } = {}) =>
  fetch(`${cluster.apiUrl}${path}`, {
    method: init.method ?? (init.body === undefined ? "GET" : "POST"),
    headers: { authorization: `Bearer ${bearer}`, "content-type": "application/json" },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });
const chat = () => call("/chat/completions", key, { body: { model: "m/ok", messages: [{ role: "user", content: "hi" }] } });
const usage = async () => ((await (await call("/key", key)).json()) as { data: { usage: number } }).data.usage;
const readiness = async (url: string) => {
  const res = await fetch(`${url}/readyz`);
  return { status: res.status, body: (await res.json()) as { status: string; checks: Record<string, string> } };
};
const processNames = ["identity", "catalog", "inference", "router"] as const;

beforeAll(async () => {
  upstream = await startFakeProvider("alpha");
  nats = await startTestNats({ private: true });
  await nats.kill!();
  const catalog = await catalogEnv({
    providers: [{ slug: "alpha", name: "Alpha", adapter: "openai-compatible", base_url: upstream.baseUrl, requires_api_key: false }],
    models: [{ id: "m/ok", name: "ok", context_length: 8000, endpoints: [{ provider: "alpha", upstream_model: "ok", pricing }] }],
  });
  // A long auth cache: only the key change's event can make the router forget a key within this test.
  cluster = await startServiceProcesses(["catalog", "inference"], { ...catalog, NATS_NAMESPACE: namespace, AUTH_CACHE_TTL_MS: "600000" }, { nats });
}, 120_000);

afterAll(async () => {
  const codes = (await cluster?.stop()) ?? {};
  await upstream?.stop();
  // Every process drained and exited cleanly on SIGTERM.
  expect(Object.values(codes).every((code) => code === 0), JSON.stringify(codes)).toBe(true);
}, 60_000);

describe("processes started while NATS is down", () => {
  it("start, serve a key and a chat, and report NATS as degraded while staying ready", async () => {
    const created = await call("/keys", cluster.bootstrapKey, { body: { name: "started without nats", limit: 10 } });
    expect(created.status).toBe(201);
    const body = (await created.json()) as { key: string; data: { hash: string } };
    key = body.key;
    hash = body.data.hash;
    const answer = await chat();
    expect(answer.status).toBe(200);
    expect(((await answer.json()) as { choices: unknown[] }).choices).toHaveLength(1);

    for (const name of processNames) {
      const { status, body: ready } = await readiness(cluster.urls[name]);
      expect(status, name).toBe(200);
      expect(ready.status, name).toBe("degraded");
      expect(ready.checks.nats, name).toMatch(/^degraded: NATS unreachable/);
      if (name !== "router") expect(ready.checks.database, name).toBe("ok");
    }
    const metrics = await (await fetch(`${cluster.urls.identity}/metrics`)).text();
    expect(metrics).toMatch(/^switchyard_bus_connected\{service="identity"\} 0$/m);
    // The generation's charge waits in inference's outbox: not applied yet.
    expect(await usage()).toBe(0);
    expect(cluster.processes.identity!.output()).toContain("NATS unreachable; serving without it and retrying in the background");
  });

  it("make their streams and consumers when NATS answers, deliver what waited, and hear key changes", async () => {
    await nats.restart!();
    await eventually(async () => {
      const all = await Promise.all(processNames.map((name) => readiness(cluster.urls[name])));
      return all.every((r) => r.status === 200 && r.body.status === "ready" && r.body.checks.nats === "ok");
    }, 30_000);

    // The outbox relay published the generation and identity's ledger, made on connection, applied it.
    await eventually(async () => (await usage()) > 0, 30_000);
    const monitor = await connect({ servers: nats.url });
    try {
      const jsm = await jetstreamManager(monitor);
      const consumers = await jsm.consumers.list(`${namespace}_INFERENCE`).next();
      // One durable per subject (NATS 2.9 has one filter per consumer), named after it.
      expect(consumers.map((c) => c.name)).toContain(`${namespace}_identity_ledger-inference_generation_completed_v1`);
    } finally {
      await monitor.close();
    }

    // The router authenticated the key before (cached for 10 minutes); its listener, made on connection,
    // drops it when identity's change arrives.
    expect((await chat()).status).toBe(200);
    const disabled = await call(`/keys/${hash}`, cluster.bootstrapKey, { method: "PATCH", body: { disabled: true } });
    expect(disabled.status).toBe(200);
    await eventually(async () => (await chat()).status === 401, 15_000);
  }, 120_000);
});
