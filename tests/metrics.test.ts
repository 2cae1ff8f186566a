import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { startFakeProvider, type FakeProvider } from "./support/fake-provider.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";

let gw: TestGateway;
let upstream: FakeProvider;
let key: string;

beforeAll(async () => {
  upstream = await startFakeProvider("alpha");
  const pricing = { prompt: "0.000001", completion: "0.000002" };
  gw = await startTestGateway(
    await catalogEnv({
      providers: [{ slug: "alpha", name: "Alpha", adapter: "openai-compatible", base_url: upstream.baseUrl, requires_api_key: false }],
      models: [
        { id: "m/ok", name: "ok", context_length: 8000, endpoints: [{ provider: "alpha", upstream_model: "ok", pricing }] },
        { id: "m/limited", name: "limited", context_length: 8000, endpoints: [{ provider: "alpha", upstream_model: "rate-limited", pricing }] },
      ],
    }),
  );
  key = String((await gw.call("POST", "/keys", { body: { name: "metrics" } })).body.key);
});
afterAll(async () => {
  await gw?.stop();
  await upstream?.stop();
});

/** The value of one series in Prometheus' text format, or undefined when it is absent. */
const sample = (text: string, name: string, labels: Record<string, string>) => {
  const line = text.split("\n").find((l) => l.startsWith(`${name}{`) && Object.entries(labels).every(([k, v]) => l.includes(`${k}="${v}"`)));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(" ") + 1));
};

describe("GET /metrics", () => {
  it("counts requests by route and status, upstream attempts by provider and outcome, holds, streams and the outbox", async () => {
    const chat = (model: string, stream = false) => gw.call("POST", "/chat/completions", { key, body: { model, stream, messages: [{ role: "user", content: "hi" }] } });
    expect((await chat("m/ok")).status).toBe(200);
    await fetch(`${gw.apiUrl}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "m/ok", stream: true, messages: [{ role: "user", content: "hi" }] }),
    }).then((r) => r.text());
    expect((await chat("m/limited")).status).toBe(429);
    const res = await fetch(`${gw.baseUrl}/metrics`);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain/);
    const text = await res.text();
    expect(sample(text, "switchyard_http_requests_total", { service: "router", route: "/api/v1/chat/completions", status: "200" })).toBeGreaterThanOrEqual(2);
    expect(sample(text, "switchyard_http_requests_total", { service: "router", route: "/api/v1/chat/completions", status: "429" })).toBeGreaterThanOrEqual(1);
    expect(sample(text, "switchyard_http_request_duration_seconds_bucket", { service: "router", route: "/api/v1/chat/completions", le: "+Inf" })).toBeGreaterThanOrEqual(3);
    expect(sample(text, "switchyard_upstream_attempts_total", { provider: "alpha", outcome: "accepted" })).toBeGreaterThanOrEqual(2);
    expect(sample(text, "switchyard_upstream_attempts_total", { provider: "alpha", outcome: "429" })).toBeGreaterThanOrEqual(1);
    expect(sample(text, "switchyard_spend_holds_total", { outcome: "granted" })).toBeGreaterThanOrEqual(3);
    expect(sample(text, "switchyard_stream_duration_seconds_count", { service: "inference", status: "completed" })).toBeGreaterThanOrEqual(1);
    expect(sample(text, "switchyard_outbox_pending_events", { schema: "inference" })).toBeGreaterThanOrEqual(0);
    expect(sample(text, "switchyard_outbox_lag_seconds", { schema: "identity" })).toBeGreaterThanOrEqual(0);
    expect(text).toContain("switchyard_process_cpu_seconds_total");
    expect(text).toContain("switchyard_nodejs_eventloop_lag_seconds");
    // Ids never become labels.
    expect(text).not.toMatch(/route="[^"]*(gen-|sk-sy)/);
  });
});
