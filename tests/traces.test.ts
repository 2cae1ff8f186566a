import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { eventually } from "./support/eventually.js";
import { startFakeCollector, type CollectedSpan, type FakeCollector } from "./support/fake-collector.js";
import { startFakeProvider, type FakeProvider } from "./support/fake-provider.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";
import { startServiceProcesses, type ServiceProcesses } from "./support/service-processes.js";

/**
 * One request's W3C `traceparent` through the router, inference and the provider: the provider is called
 * with the trace the client started, and the collector gets one trace of the router's and inference's
 * SERVER spans and a CLIENT span per provider attempt, each the child of the one before.
 */

const pricing = { prompt: "0.000001", completion: "0.000002" };
const SERVER = 2;
const CLIENT = 3;

let alpha: FakeProvider;
let broken: FakeProvider;
let collector: FakeCollector;

async function env(): Promise<Record<string, string>> {
  return {
    ...(await catalogEnv({
      providers: [
        { slug: "alpha", name: "Alpha", adapter: "openai-compatible", base_url: alpha.baseUrl, requires_api_key: false },
        { slug: "broken", name: "Broken", adapter: "openai-compatible", base_url: broken.baseUrl, requires_api_key: false },
      ],
      models: [
        {
          id: "m/traced",
          name: "Traced",
          context_length: 8000,
          endpoints: [
            { provider: "broken", upstream_model: "fail-500", pricing },
            { provider: "alpha", upstream_model: "ok", pricing },
          ],
        },
        { id: "m/cut", name: "Cut", context_length: 8000, endpoints: [{ provider: "alpha", upstream_model: "cut", pricing }] },
      ],
    })),
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
    OTEL_EXPORTER_OTLP_HEADERS: "x-tenant=acme",
    OTEL_BSP_SCHEDULE_DELAY: "100",
  };
}

const hex = (bytes: number) => Array.from({ length: bytes }, () => Math.floor(Math.random() * 256).toString(16).padStart(2, "0")).join("");

async function chat(apiUrl: string, key: string, headers: Record<string, string>, stream = false, model = "m/traced") {
  const res = await fetch(`${apiUrl}/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...headers },
    body: JSON.stringify({ model, stream, provider: { order: ["broken", "alpha"] }, messages: [{ role: "user", content: "hi" }] }),
  });
  return { status: res.status, text: await res.text() };
}

/**
 * The spans of one trace once the router's, inference's and `attempts` attempts' have arrived. (The failing
 * endpoint rests after its first failure, so later requests of a process try the healthy one alone.)
 */
async function traceOf(traceId: string, attempts = 2): Promise<CollectedSpan[]> {
  const spans = () => collector.spans.filter((s) => s.traceId === traceId);
  await eventually(async () => {
    const got = spans();
    return got.some((s) => s.service === "router") && got.some((s) => s.service === "inference" && s.kind === SERVER) && got.filter((s) => s.kind === CLIENT).length >= attempts;
  }, 20_000);
  return spans();
}

/** Follows the client's trace to the provider and back through the collector's spans. */
function expectFollowed(spans: CollectedSpan[], client: { traceId: string; spanId?: string }, provider: FakeProvider, failed: FakeProvider, body: string) {
  const router = spans.find((s) => s.service === "router" && s.kind === SERVER)!;
  expect(router.parentSpanId).toBe(client.spanId);
  expect(router.attributes).toMatchObject({ "http.request.method": "POST", "url.path": "/api/v1/chat/completions", "http.response.status_code": 200 });
  expect(router.attributes["http.route"]).toMatch(/^\/api\/v1/);

  const inference = spans.find((s) => s.service === "inference" && s.kind === SERVER && s.parentSpanId === router.spanId)!;
  expect(inference).toBeDefined();
  expect(inference.attributes).toMatchObject({ "http.request.method": "POST", "http.response.status_code": 200 });

  const attempts = spans.filter((s) => s.kind === CLIENT && s.parentSpanId === inference.spanId);
  const [failure, served] = [attempts.find((s) => s.attributes["gen_ai.provider.name"] === "broken")!, attempts.find((s) => s.attributes["gen_ai.provider.name"] === "alpha")!];
  expect(failure).toMatchObject({ service: "inference", name: "chat fail-500", status: { code: 2 } });
  expect(failure.attributes).toMatchObject({ "gen_ai.operation.name": "chat", "gen_ai.request.model": "fail-500", "http.response.status_code": 500, "error.type": "500", "server.address": "127.0.0.1" });
  expect(served).toMatchObject({ service: "inference", name: "chat ok" });
  expect(served.status?.code).not.toBe(2);
  expect(served.attributes).toMatchObject({
    "gen_ai.operation.name": "chat",
    "gen_ai.provider.name": "alpha",
    "gen_ai.system": "alpha",
    "gen_ai.request.model": "ok",
    "gen_ai.usage.input_tokens": 12,
    "gen_ai.usage.output_tokens": 5,
    "http.response.status_code": 200,
    "server.address": "127.0.0.1",
    "switchyard.model": "m/traced",
    "gen_ai.response.finish_reasons": "stop",
    "switchyard.status": "completed",
  });
  expect(served.attributes["gen_ai.response.id"]).toBeTypeOf("string");
  expect(served.attributes["switchyard.generation_id"]).toBe((JSON.parse(body) as { id: string }).id);
  // The served attempt's span lasts until its generation is recorded: it ends within the request's span.
  expect(BigInt(served.endTimeUnixNano)).toBeLessThanOrEqual(BigInt(inference.endTimeUnixNano));
  expect(BigInt(served.startTimeUnixNano)).toBeGreaterThanOrEqual(BigInt(failure.endTimeUnixNano));

  // Each provider was called with the trace, naming the span of the attempt that called it.
  const sent = (fake: FakeProvider) => String(fake.requests.findLast((r) => String(r.headers.traceparent ?? "").includes(client.traceId))?.headers.traceparent);
  expect(sent(provider)).toBe(`00-${client.traceId}-${served.spanId}-01`);
  expect(sent(failed)).toBe(`00-${client.traceId}-${failure.spanId}-01`);
}

beforeAll(async () => {
  collector = await startFakeCollector();
  alpha = await startFakeProvider("alpha");
  broken = await startFakeProvider("broken");
});
afterAll(async () => {
  await alpha?.stop();
  await broken?.stop();
  await collector?.stop();
});

describe("traces in one process", () => {
  let gw: TestGateway;
  let key: string;

  beforeAll(async () => {
    gw = await startTestGateway(await env());
    key = String((await gw.call("POST", "/keys", { body: { name: "traced" } })).body.key);
  });
  afterAll(async () => {
    await gw?.stop();
  });

  it("follows a client's traceparent through router, inference and the provider", async () => {
    const client = { traceId: hex(16), spanId: hex(8) };
    const res = await chat(gw.apiUrl, key, { traceparent: `00-${client.traceId}-${client.spanId}-01`, tracestate: "vendor=opaque" });
    expect(res.status).toBe(200);
    const spans = await traceOf(client.traceId);
    expectFollowed(spans, client, alpha, broken, res.text);
    // Each service's spans carry its own service.name, as they would from their own processes.
    expect(new Set(spans.map((s) => s.service))).toEqual(new Set(["router", "inference"]));
    expect(spans.find((s) => s.service === "router")!.traceState).toBe("vendor=opaque");
    expect(collector.exports.every((e) => e.path === "/v1/traces" && e.headers["x-tenant"] === "acme")).toBe(true);
  });

  it("starts a trace of its own when the client's traceparent is malformed", async () => {
    const bad = `00-${"0".repeat(32)}-${hex(8)}-01`;
    const before = alpha.requests.length;
    expect((await chat(gw.apiUrl, key, { traceparent: bad })).status).toBe(200);
    const sent = String(alpha.requests.slice(before).at(-1)?.headers.traceparent);
    const [, traceId] = /^00-([0-9a-f]{32})-[0-9a-f]{16}-01$/.exec(sent) ?? [];
    expect(traceId).toBeDefined();
    expect(traceId).not.toBe("0".repeat(32));
    const spans = await traceOf(traceId!, 1);
    expect(spans.find((s) => s.service === "router")!.parentSpanId).toBeUndefined();
  });

  it("keeps a stream's served attempt open until the stream's generation is recorded", async () => {
    const client = { traceId: hex(16), spanId: hex(8) };
    const res = await chat(gw.apiUrl, key, { traceparent: `00-${client.traceId}-${client.spanId}-01` }, true);
    expect(res.text).toContain("data: [DONE]");
    const spans = await traceOf(client.traceId, 1);
    const served = spans.find((s) => s.kind === CLIENT && s.attributes["gen_ai.provider.name"] === "alpha")!;
    expect(served.attributes).toMatchObject({ "gen_ai.usage.input_tokens": 12, "gen_ai.usage.output_tokens": 5 });
  });

  it("marks the served attempt failed when its stream breaks after the first byte", async () => {
    const client = { traceId: hex(16), spanId: hex(8) };
    const res = await chat(gw.apiUrl, key, { traceparent: `00-${client.traceId}-${client.spanId}-01` }, true, "m/cut");
    expect(res.status).toBe(200);
    const spans = await traceOf(client.traceId, 1);
    const served = spans.find((s) => s.kind === CLIENT)!;
    expect(served).toMatchObject({ name: "chat cut", status: { code: 2 } });
    expect(served.attributes).toMatchObject({ "switchyard.status": "error", "error.type": "stream_error", "http.response.status_code": 200 });
  });

  it("leaves probes out of traces", async () => {
    const traceId = hex(16);
    expect((await fetch(`${gw.baseUrl}/healthz`, { headers: { traceparent: `00-${traceId}-${hex(8)}-01` } })).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(collector.spans.some((s) => s.traceId === traceId)).toBe(false);
  });
});

describe("traces turned off", () => {
  let gw: TestGateway;
  let key: string;

  beforeAll(async () => {
    const { OTEL_EXPORTER_OTLP_ENDPOINT: _endpoint, ...untraced } = await env();
    gw = await startTestGateway(untraced);
    key = String((await gw.call("POST", "/keys", { body: { name: "untraced" } })).body.key);
  });
  afterAll(async () => {
    await gw?.stop();
  });

  it("sends no span and no traceparent to the provider, whatever the client sent", async () => {
    const traceId = hex(16);
    const before = { alpha: alpha.requests.length, spans: collector.spans.length };
    expect((await chat(gw.apiUrl, key, { traceparent: `00-${traceId}-${hex(8)}-01` })).status).toBe(200);
    const sent = alpha.requests.slice(before.alpha);
    expect(sent.length).toBeGreaterThan(0);
    expect(sent.every((r) => r.headers.traceparent === undefined)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(collector.spans.slice(before.spans).some((s) => s.traceId === traceId)).toBe(false);
  });
});

describe("traces across processes", () => {
  let cluster: ServiceProcesses;
  let key: string;

  beforeAll(async () => {
    cluster = await startServiceProcesses(["catalog", "inference"], await env());
    const created = await fetch(`${cluster.apiUrl}/keys`, {
      method: "POST",
      headers: { authorization: `Bearer ${cluster.bootstrapKey}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "traced" }),
    });
    key = String(((await created.json()) as { key: string }).key);
  }, 120_000);
  afterAll(async () => {
    await cluster?.stop();
  }, 60_000);

  it("follows a client's traceparent from the router's process to inference's and the provider", async () => {
    const client = { traceId: hex(16), spanId: hex(8) };
    const res = await chat(cluster.apiUrl, key, { traceparent: `00-${client.traceId}-${client.spanId}-01` });
    expect(res.status).toBe(200);
    const spans = await traceOf(client.traceId);
    expectFollowed(spans, client, alpha, broken, res.text);
    // Calls between services carry the trace too: identity's spans (the key lookup, the spend holds) join it.
    const linked = () => {
      const trace = collector.spans.filter((s) => s.traceId === client.traceId);
      const ids = new Set(trace.map((s) => s.spanId));
      const identity = trace.filter((s) => s.service === "identity");
      return identity.length > 0 && identity.every((s) => ids.has(s.parentSpanId ?? ""));
    };
    await eventually(async () => linked(), 20_000).catch(() => undefined);
    const trace = collector.spans.filter((s) => s.traceId === client.traceId);
    expect(linked(), JSON.stringify(trace.map((s) => [s.service, s.name, s.spanId, s.parentSpanId]))).toBe(true);
  });
});
