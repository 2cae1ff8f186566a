import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv, imageModel } from "./support/catalog-fixture.js";
import { eventually } from "./support/eventually.js";
import { startFakeMediaProvider, type FakeMediaProvider } from "./support/fake-media.js";
import { startFakeProvider, type FakeProvider } from "./support/fake-provider.js";
import { startFakeRetrieval, type FakeRetrieval } from "./support/fake-retrieval.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";
import { startServiceProcesses, type ServiceProcesses } from "./support/service-processes.js";

const pricing = { prompt: "0.000001", completion: "0.000002" };
const chatModels = [
  { id: "m/ok", name: "ok", context_length: 8000, endpoints: [{ provider: "alpha", upstream_model: "ok", pricing }] },
  { id: "m/limited", name: "limited", context_length: 8000, endpoints: [{ provider: "alpha", upstream_model: "rate-limited", pricing }] },
  { id: "m/failing", name: "failing", context_length: 8000, endpoints: [{ provider: "alpha", upstream_model: "fail-500", pricing }] },
];
/** Models only the generation figures' test calls, so that its figures are exact whatever else ran. */
const measuredModels = [
  { id: "m/measured", name: "measured", context_length: 8000, endpoints: [{ provider: "alpha", upstream_model: "ok", pricing }] },
  { id: "m/vectors", name: "vectors", context_length: 8192, input_modalities: ["text"], output_modalities: ["embeddings"], endpoints: [{ provider: "vectors", upstream_model: "ok", pricing: { prompt: "0.000001", completion: "0" } }] },
  imageModel("m/picture", "pixels"),
];

/** prom-client's default process and Node.js figures: one process's, not a service's, so they carry no `service`. */
const processDefault = (name: string) => name.startsWith("switchyard_process_") || name.startsWith("switchyard_nodejs_");

/** Our series without a `service` label, and our gauges named like counters, in one scrape. */
function labelProblems(text: string): { unlabelled: string[]; totalGauges: string[] } {
  const lines = text.split("\n");
  const unlabelled = lines.filter((l) => l.startsWith("switchyard_") && !processDefault(l.split(/[{ ]/)[0]!) && !/[{,]service="[^"]+"/.test(l));
  const totalGauges = lines
    .filter((l) => l.startsWith("# TYPE ") && l.endsWith(" gauge"))
    .map((l) => l.split(" ")[2]!)
    .filter((name) => !processDefault(name) && name.endsWith("_total"));
  return { unlabelled, totalGauges };
}

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
  let retrieval: FakeRetrieval;
  let key: string;

  beforeAll(async () => {
    upstream = await startFakeProvider("alpha");
    media = await startFakeMediaProvider();
    retrieval = await startFakeRetrieval();
    gw = await startTestGateway(
      await catalogEnv({
        providers: [
          { slug: "alpha", name: "Alpha", adapter: "openai-compatible", base_url: upstream.baseUrl, requires_api_key: false },
          { slug: "pixels", name: "Pixels", adapter: "openai", base_url: media.baseUrl, requires_api_key: false },
          { slug: "vectors", name: "Vectors", adapter: "openai", base_url: `${retrieval.origin}/openai`, requires_api_key: false },
        ],
        models: [
          ...chatModels,
          ...measuredModels,
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
    await retrieval?.stop();
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

  it("counts each generation's latency, time to first token, tokens and cost by endpoint, and failed attempts by model and status", async () => {
    const measured = { model: "m/measured", messages: [{ role: "user", content: "hi" }] };
    expect((await gw.call("POST", "/chat/completions", { key, body: measured })).status).toBe(200);
    expect(await post(gw.apiUrl, "/chat/completions", key, { ...measured, stream: true }).then((r) => r.text())).toContain("data: [DONE]");
    // "hello world": the fake counts a token per four characters, so 3 tokens.
    expect((await gw.call("POST", "/embeddings", { key, body: { model: "m/vectors", input: "hello world" } })).status).toBe(200);
    expect(await post(gw.apiUrl, "/images", key, { model: "m/picture", prompt: "a comet", stream: true }).then((r) => r.text())).toContain("data: [DONE]");
    expect((await gw.call("POST", "/chat/completions", { key, body: { ...measured, model: "m/failing" } })).status).toBe(502);
    const text = await metricsOf(gw.baseUrl);

    // Chat: the fake reports 12 prompt tokens (2 of them cached) and 5 completion tokens, each time.
    const chat = { service: "inference", operation: "chat", provider: "alpha", model: "m/measured" };
    expect(sample(text, "switchyard_generations_total", { ...chat, status: "completed" })).toBe(2);
    expect(sample(text, "switchyard_generation_duration_seconds_count", chat)).toBe(2);
    expect(sample(text, "switchyard_generation_duration_seconds_bucket", { ...chat, le: "120" })).toBe(2);
    // Only the stream has a first token of its own; a buffered answer's is its whole time.
    expect(sample(text, "switchyard_generation_time_to_first_token_seconds_count", chat)).toBe(1);
    expect(sample(text, "switchyard_generation_tokens_total", { ...chat, kind: "prompt" })).toBe(24);
    expect(sample(text, "switchyard_generation_tokens_total", { ...chat, kind: "completion" })).toBe(10);
    expect(sample(text, "switchyard_generation_tokens_total", { ...chat, kind: "cached" })).toBe(4);
    expect(sample(text, "switchyard_generation_tokens_total", { ...chat, kind: "reasoning" })).toBeUndefined();
    // 12 × $0.000001 + 5 × $0.000002 per generation (cached tokens at the prompt price: the endpoint has no cache price).
    expect(sample(text, "switchyard_generation_cost_usd_total", { ...chat, byok: "false" })).toBeCloseTo(0.000044, 12);

    const embeddings = { service: "inference", operation: "embeddings", provider: "vectors", model: "m/vectors" };
    expect(sample(text, "switchyard_generations_total", { ...embeddings, status: "completed" })).toBe(1);
    expect(sample(text, "switchyard_generation_duration_seconds_count", embeddings)).toBe(1);
    expect(sample(text, "switchyard_generation_time_to_first_token_seconds_count", embeddings)).toBeUndefined();
    expect(sample(text, "switchyard_generation_tokens_total", { ...embeddings, kind: "prompt" })).toBe(3);
    expect(sample(text, "switchyard_generation_cost_usd_total", embeddings)).toBeCloseTo(0.000003, 12);

    // The image stream reports 20 prompt and 1200 completion tokens; the endpoint charges $0.04 an image.
    const image = { service: "media", operation: "image_generation", provider: "pixels", model: "m/picture" };
    expect(sample(text, "switchyard_generations_total", { ...image, status: "completed" })).toBe(1);
    expect(sample(text, "switchyard_generation_duration_seconds_count", image)).toBe(1);
    expect(sample(text, "switchyard_generation_time_to_first_token_seconds_count", image)).toBe(1);
    expect(sample(text, "switchyard_generation_tokens_total", { ...image, kind: "prompt" })).toBe(20);
    expect(sample(text, "switchyard_generation_tokens_total", { ...image, kind: "completion" })).toBe(1200);
    expect(sample(text, "switchyard_generation_cost_usd_total", image)).toBeCloseTo(0.04, 12);

    // The failing provider: its attempt counted by model and status; no generation was recorded.
    expect(sample(text, "switchyard_upstream_attempts_total", { service: "inference", provider: "alpha", model: "m/failing", outcome: "500" })).toBe(1);
    expect(sample(text, "switchyard_upstream_attempts_total", { service: "inference", provider: "alpha", model: "m/measured", outcome: "accepted" })).toBe(2);
    expect(sample(text, "switchyard_generations_total", { model: "m/failing" })).toBeUndefined();
  });

  it("counts no probe, in whatever case its path is written", async () => {
    for (const path of ["/METRICS", "/Healthz", "/readyz"]) expect((await fetch(`${gw.baseUrl}${path}`)).status).toBe(200);
    const text = await metricsOf(gw.baseUrl);
    expect(text).not.toMatch(/switchyard_http_requests_total\{[^}]*route="\/(metrics|healthz|readyz)"/i);
  });

  it("labels every series with its service and names no gauge like a counter", async () => {
    const text = await metricsOf(gw.baseUrl);
    expect(labelProblems(text)).toEqual({ unlabelled: [], totalGauges: [] });
    // The exemption is prom-client's own figures, and only those.
    expect(text).toMatch(/^switchyard_process_cpu_seconds_total \d/m);
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

    // Each process's own series carry its service too: the bus's and its consumers' among them.
    expect(sample(identity, "switchyard_bus_connected", { service: "identity" })).toBe(1);
    expect(sample(inference, "switchyard_generations_total", { service: "inference", model: "m/ok", status: "completed" })).toBe(2);
    for (const [name, url] of Object.entries(cluster.urls)) expect(labelProblems(await metricsOf(url)), name).toEqual({ unlabelled: [], totalGauges: [] });
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
