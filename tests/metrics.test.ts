import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv, imageModel } from "./support/catalog-fixture.js";
import { eventually } from "./support/eventually.js";
import { startFakeMediaProvider, type FakeMediaProvider } from "./support/fake-media.js";
import { startFakeProvider, type FakeProvider } from "./support/fake-provider.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";
import { startServiceProcesses, type ServiceProcesses } from "./support/service-processes.js";

const pricing = { prompt: "0.000001", completion: "0.000002" };
const chatModels = [
  { id: "m/ok", name: "ok", context_length: 8000, endpoints: [{ provider: "alpha", upstream_model: "ok", pricing }] },
  { id: "m/limited", name: "limited", context_length: 8000, endpoints: [{ provider: "alpha", upstream_model: "rate-limited", pricing }] },
  { id: "m/failing", name: "failing", context_length: 8000, endpoints: [{ provider: "alpha", upstream_model: "fail-500", pricing }] },
];

/** The value of one series in Prometheus' text format, or undefined when it is absent. */
const sample = (text: string, name: string, labels: Record<string, string>) => {
  const line = text.split("\n").find((l) => l.startsWith(`${name}{`) && Object.entries(labels).every(([k, v]) => l.includes(`${k}="${v}"`)));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(" ") + 1));
};
const metricsOf = (baseUrl: string) => fetch(`${baseUrl}/metrics`).then((r) => r.text());

const post = (apiUrl: string, path: string, key: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${apiUrl}${path}`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...headers }, body: JSON.stringify(body) });

describe("GET /metrics", () => {
  let gw: TestGateway;
  let upstream: FakeProvider;
  let media: FakeMediaProvider;
  let key: string;

  beforeAll(async () => {
    upstream = await startFakeProvider("alpha");
    media = await startFakeMediaProvider();
    gw = await startTestGateway(
      await catalogEnv({
        providers: [
          { slug: "alpha", name: "Alpha", adapter: "openai-compatible", base_url: upstream.baseUrl, requires_api_key: false },
          { slug: "pixels", name: "Pixels", adapter: "openai", base_url: media.baseUrl, requires_api_key: false },
        ],
        models: [
          ...chatModels,
          imageModel("m/image", "pixels"),
        ],
      }),
    );
    // A key with a limit, so that its holds are rows that are settled or released.
    key = String((await gw.call("POST", "/keys", { body: { name: "metrics", limit: 100 } })).body.key);
  });
  afterAll(async () => {
    await gw?.stop();
    await upstream?.stop();
    await media?.stop();
  });

  it("counts requests by route and status, upstream attempts by provider and outcome, holds, streams and the outbox", async () => {
    const chat = (model: string, stream = false) => gw.call("POST", "/chat/completions", { key, body: { model, stream, messages: [{ role: "user", content: "hi" }] } });
    expect((await chat("m/ok")).status).toBe(200);
    await post(gw.apiUrl, "/chat/completions", key, { model: "m/ok", stream: true, messages: [{ role: "user", content: "hi" }] }).then((r) => r.text());
    expect((await chat("m/limited")).status).toBe(429);
    const images = await post(gw.apiUrl, "/images", key, { model: "m/image", prompt: "a comet", stream: true }).then((r) => r.text());
    expect(images).toContain("data: [DONE]");
    const res = await fetch(`${gw.baseUrl}/metrics`);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain/);
    const text = await res.text();
    expect(sample(text, "switchyard_http_requests_total", { service: "router", route: "/api/v1/chat/completions", status: "200" })).toBeGreaterThanOrEqual(2);
    expect(sample(text, "switchyard_http_requests_total", { service: "router", route: "/api/v1/chat/completions", status: "429" })).toBeGreaterThanOrEqual(1);
    expect(sample(text, "switchyard_http_request_duration_seconds_bucket", { service: "router", route: "/api/v1/chat/completions", le: "+Inf" })).toBeGreaterThanOrEqual(3);
    expect(sample(text, "switchyard_upstream_attempts_total", { provider: "alpha", outcome: "accepted" })).toBeGreaterThanOrEqual(2);
    expect(sample(text, "switchyard_upstream_attempts_total", { provider: "alpha", outcome: "429" })).toBeGreaterThanOrEqual(1);
    expect(sample(text, "switchyard_spend_holds_total", { outcome: "granted" })).toBeGreaterThanOrEqual(4);
    // The rate-limited attempt charged nothing: its hold was released, not left to expire.
    expect(sample(text, "switchyard_spend_holds_total", { outcome: "released" })).toBeGreaterThanOrEqual(1);
    expect(sample(text, "switchyard_spend_holds_open", { state: "active" })).toBeGreaterThanOrEqual(0);
    expect(sample(text, "switchyard_spend_holds_open", { state: "expired" })).toBe(0);
    expect(sample(text, "switchyard_stream_duration_seconds_count", { service: "inference", status: "completed" })).toBeGreaterThanOrEqual(1);
    expect(sample(text, "switchyard_stream_duration_seconds_count", { service: "media", status: "completed" })).toBeGreaterThanOrEqual(1);
    expect(sample(text, "switchyard_outbox_pending_events", { schema: "inference" })).toBeGreaterThanOrEqual(0);
    expect(sample(text, "switchyard_outbox_lag_seconds", { schema: "identity" })).toBeGreaterThanOrEqual(0);
    expect(text).toContain("switchyard_process_cpu_seconds_total");
    expect(text).toContain("switchyard_nodejs_eventloop_lag_seconds");
    // Ids never become labels.
    expect(text).not.toMatch(/route="[^"]*(gen-|sk-sy)/);
    // Charged generations settle their holds.
    await eventually(async () => (sample(await metricsOf(gw.baseUrl), "switchyard_spend_holds_total", { outcome: "settled" }) ?? 0) >= 3, 10_000);
  });
});

describe("metrics and logs of separate processes", () => {
  let upstream: FakeProvider;
  let cluster: ServiceProcesses;
  let key: string;
  let codes: Record<string, number | null> = {};

  beforeAll(async () => {
    upstream = await startFakeProvider("alpha");
    const catalog = await catalogEnv({
      providers: [{ slug: "alpha", name: "Alpha", adapter: "openai-compatible", base_url: upstream.baseUrl, requires_api_key: false }],
      models: chatModels,
    });
    cluster = await startServiceProcesses(["catalog", "inference"], catalog);
    const created = await post(cluster.apiUrl, "/keys", cluster.bootstrapKey, { name: "observed", limit: 100 });
    key = String(((await created.json()) as { key: string }).key);
  }, 120_000);
  afterAll(async () => {
    codes = (await cluster?.stop()) ?? {};
    await upstream?.stop();
    // Every process drained and exited cleanly on SIGTERM.
    expect(Object.values(codes).every((code) => code === 0), JSON.stringify(codes)).toBe(true);
  }, 60_000);

  it("serves each process's own figures: holds and the ledger's backlog from identity, attempts and streams from inference", async () => {
    const chat = (model: string, stream = false) => post(cluster.apiUrl, "/chat/completions", key, { model, stream, messages: [{ role: "user", content: "hi" }] }).then(async (r) => ({ status: r.status, text: await r.text() }));
    expect((await chat("m/ok")).status).toBe(200);
    expect((await chat("m/ok", true)).text).toContain("data: [DONE]");
    expect((await chat("m/limited")).status).toBe(429);

    // Identity grants, releases and (once the ledger consumer has the events) settles holds.
    await eventually(async () => (sample(await metricsOf(cluster.urls.identity), "switchyard_spend_holds_total", { outcome: "settled" }) ?? 0) >= 2, 15_000);
    const identity = await metricsOf(cluster.urls.identity);
    expect(sample(identity, "switchyard_spend_holds_total", { outcome: "granted" })).toBeGreaterThanOrEqual(3);
    expect(sample(identity, "switchyard_spend_holds_total", { outcome: "released" })).toBeGreaterThanOrEqual(1);
    expect(sample(identity, "switchyard_spend_holds_open", { state: "active" })).toBe(0);
    expect(sample(identity, "switchyard_spend_holds_open", { state: "expired" })).toBe(0);
    // The ledger's durable consumer reports its backlog (pending + unacknowledged), polled from NATS.
    await eventually(async () => {
      const line = (await metricsOf(cluster.urls.identity)).split("\n").find((l) => l.startsWith("switchyard_consumer_pending_messages{") && l.includes("identity_ledger"));
      return line !== undefined && Number(line.slice(line.lastIndexOf(" ") + 1)) === 0;
    }, 15_000);

    const inference = await metricsOf(cluster.urls.inference);
    expect(sample(inference, "switchyard_upstream_attempts_total", { service: "inference", provider: "alpha", outcome: "accepted" })).toBeGreaterThanOrEqual(2);
    expect(sample(inference, "switchyard_stream_duration_seconds_count", { service: "inference", status: "completed" })).toBeGreaterThanOrEqual(1);
    expect(sample(inference, "switchyard_http_requests_total", { service: "inference", status: "429" })).toBeGreaterThanOrEqual(1);
    // Holds are counted where they are kept, once: not again by the process that asked for them.
    expect(sample(inference, "switchyard_spend_holds_total", { outcome: "granted" })).toBeUndefined();

    const router = await metricsOf(cluster.urls.router);
    expect(sample(router, "switchyard_http_requests_total", { service: "router", route: "/api/v1/chat/completions", status: "200" })).toBeGreaterThanOrEqual(2);
  });

  it("logs one request's lines in every process it crosses under the same reqId", async () => {
    const reqId = `trace-me-${randomBytes(6).toString("hex")}`;
    const res = await post(cluster.apiUrl, "/chat/completions", key, { model: "m/failing", messages: [{ role: "user", content: "hi" }] }, { "x-request-id": reqId });
    expect(res.status).toBe(502);
    expect(res.headers.get("x-request-id")).toBe(reqId);
    const linesWith = (name: "router" | "inference") =>
      cluster.processes[name]!.output()
        .split("\n")
        .filter((l) => l.startsWith("{"))
        .map((l) => JSON.parse(l) as { reqId?: string; msg: string })
        .filter((l) => l.reqId === reqId);
    await eventually(async () => linesWith("router").length > 0 && linesWith("inference").length > 1, 5_000);
    // Not only the request's own log line: what inference logged while handling it (the provider's failure) too.
    expect(linesWith("inference").map((l) => l.msg)).toContain("upstream attempt failed");
    expect(linesWith("router").map((l) => l.msg)).toContain("request completed");
  });
});
