import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { startFakeProvider, type FakeProvider } from "./support/fake-provider.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";

let gw: TestGateway;
let fake: FakeProvider;
let key: string;

const endpoint = (provider: string, upstream: string) => ({ provider, upstream_model: upstream, pricing: { prompt: "0.000001", completion: "0.000001" } });

beforeAll(async () => {
  fake = await startFakeProvider("alpha");
  const catalog = {
    providers: [
      { slug: "alpha", name: "Alpha", adapter: "openai-compatible", base_url: fake.baseUrl, requires_api_key: false },
      { slug: "beta", name: "Beta", adapter: "openai-compatible", base_url: fake.baseUrl, requires_api_key: false },
    ],
    models: [{ id: "limit/m", name: "Limited", context_length: 8000, endpoints: [endpoint("alpha", "rate-limited"), endpoint("beta", "ok")] }],
  };
  // No encryption secret: storing a workspace's provider key is a 503 (the deployment cannot do it yet).
  gw = await startTestGateway({ ...(await catalogEnv(catalog)), RATE_LIMIT_PER_MINUTE: "30" });
  key = String((await gw.call("POST", "/keys", { body: { name: "retry-after" } })).body.key);
});
afterAll(async () => {
  await gw?.stop();
  await fake?.stop();
});

const messages = [{ role: "user", content: "Hi" }];

describe("Retry-After on every 429 and 503", () => {
  it("passes a provider's 429 on with its Retry-After, buffered and streamed", async () => {
    for (const stream of [false, true]) {
      const res = await gw.call("POST", "/chat/completions", { key, body: { model: "limit/m", messages, stream, provider: { order: ["alpha"], allow_fallbacks: false } } });
      expect(res.status).toBe(429);
      expect(res.headers.get("retry-after")).toBe("30");
    }
    // With fallbacks the other endpoint answers.
    expect((await gw.call("POST", "/chat/completions", { key, body: { model: "limit/m", messages, provider: { order: ["alpha", "beta"] } } })).status).toBe(200);
  });

  it("says when to come back on the gateway's own 503s", async () => {
    const workspaces = await gw.call("GET", "/workspaces");
    const workspaceId = String(workspaces.body.data?.[0]?.id);
    const put = await gw.call("PUT", `/workspaces/${workspaceId}/provider-keys/openai`, { body: { key: "sk-workspace-own-openai" } });
    expect(put.status).toBe(503);
    expect(Number(put.headers.get("retry-after"))).toBeGreaterThan(0);
  });

  it("says when to come back on the router's own rate limit", async () => {
    const own = String((await gw.call("POST", "/keys", { body: { name: "busy" } })).body.key);
    let limited;
    for (let i = 0; i < 40 && !limited; i++) {
      const res = await gw.call("GET", "/key", { key: own });
      if (res.status === 429) limited = res;
    }
    expect(limited?.status).toBe(429);
    expect(Number(limited?.headers.get("retry-after"))).toBeGreaterThan(0);
  });
});
