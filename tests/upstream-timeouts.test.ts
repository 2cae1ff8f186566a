import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { startFakeProvider, type FakeProvider } from "./support/fake-provider.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";

let gw: TestGateway;
let alpha: FakeProvider;
let beta: FakeProvider;
let key: string;

const firstByteMs = 1500;
const endpoint = (provider: string, upstream: string) => ({ provider, upstream_model: upstream, pricing: { prompt: "0.000001", completion: "0.000001" } });

beforeAll(async () => {
  alpha = await startFakeProvider("alpha");
  beta = await startFakeProvider("beta");
  const catalog = {
    providers: [
      { slug: "alpha", name: "Alpha", adapter: "openai-compatible", base_url: alpha.baseUrl, requires_api_key: false },
      { slug: "beta", name: "Beta", adapter: "openai-compatible", base_url: beta.baseUrl, requires_api_key: false },
    ],
    models: [
      { id: "hang/buffered", name: "Hangs", context_length: 8000, endpoints: [endpoint("alpha", "stall"), endpoint("beta", "ok")] },
      { id: "hang/streamed", name: "Silent stream", context_length: 8000, endpoints: [endpoint("alpha", "silent-stream"), endpoint("beta", "ok")] },
      { id: "hang/mid-stream", name: "Stalls mid-stream", context_length: 8000, endpoints: [endpoint("alpha", "stall-after-first")] },
    ],
  };
  // The request deadline is far beyond the per-attempt timeouts, so only those can explain a quick answer.
  gw = await startTestGateway({
    ...(await catalogEnv(catalog)),
    REQUEST_TIMEOUT_MS: "25000",
    UPSTREAM_FIRST_BYTE_TIMEOUT_MS: String(firstByteMs),
    UPSTREAM_IDLE_TIMEOUT_MS: "1500",
    UPSTREAM_FAILURE_COOLDOWN_MS: "600000",
  });
  key = String((await gw.call("POST", "/keys", { body: { name: "timeouts" } })).body.key);
});
afterAll(async () => {
  await gw?.stop();
  await alpha?.stop();
  await beta?.stop();
});

const messages = [{ role: "user", content: "Hi" }];
const upstreamModels = (fake: FakeProvider) => fake.requests.map((r) => String(r.body.model));
const count = (fake: FakeProvider, model: string) => upstreamModels(fake).filter((m) => m === model).length;

function streamed(model: string) {
  return fetch(`${gw.apiUrl}/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model, messages, stream: true, provider: { order: ["alpha", "beta"] } }),
  });
}

describe("an endpoint that accepts and never answers", () => {
  it("is given up after the first-byte timeout and the next endpoint answers (buffered), then rests", async () => {
    const started = Date.now();
    const res = await gw.call("POST", "/chat/completions", { key, body: { model: "hang/buffered", messages, provider: { order: ["alpha", "beta"] } } });
    const took = Date.now() - started;
    expect(res.status).toBe(200);
    expect(JSON.stringify(res.body.choices)).toContain("Hello from beta");
    expect(count(alpha, "stall")).toBe(1);
    // Near the first-byte timeout, far from the 25 s deadline (generous bounds for a slow machine).
    expect(took).toBeGreaterThanOrEqual(firstByteMs - 100);
    expect(took).toBeLessThan(15_000);
    const stored = (await gw.call("GET", `/generation?id=${String(res.body.id)}`, { key })).body.data as unknown as { provider_name: string };
    expect(stored.provider_name).toBe("beta");

    // The endpoint that timed out rests: the next request, which prefers it, goes to beta without waiting on it.
    const next = await gw.call("POST", "/chat/completions", { key, body: { model: "hang/buffered", messages, provider: { order: ["alpha", "beta"] } } });
    expect(next.status).toBe(200);
    expect(count(alpha, "stall")).toBe(1);
  });

  it("is given up when a stream sends headers and no event, and the next endpoint streams", async () => {
    const started = Date.now();
    const text = await (await streamed("hang/streamed")).text();
    expect(Date.now() - started).toBeGreaterThanOrEqual(firstByteMs - 100);
    expect(text).toContain("from beta");
    expect(text.trimEnd().endsWith("data: [DONE]")).toBe(true);
    expect(count(alpha, "silent-stream")).toBe(1);
    expect(count(beta, "ok")).toBeGreaterThanOrEqual(1);
  });
});

describe("a stream that stalls after its first chunk", () => {
  it("ends with an in-band error that names the gateway's idle timeout", async () => {
    const started = Date.now();
    const res = await streamed("hang/mid-stream");
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(Date.now() - started).toBeLessThan(15_000);
    const frames = text
      .split("\n\n")
      .filter((f) => f.startsWith("data: "))
      .map((f) => f.slice(6));
    expect(frames.at(-1)).not.toBe("[DONE]");
    const last = JSON.parse(frames.at(-1)!) as { error: { code: number; message: string }; choices: Array<{ finish_reason: string }> };
    expect(last.error.message).toContain("UPSTREAM_IDLE_TIMEOUT_MS");
    expect(last.error.message).not.toContain("Provider returned error");
    expect(last.error.code).toBe(524);
    expect(last.choices[0]?.finish_reason).toBe("error");
    expect(text).toContain("Hello ");
  });
});
