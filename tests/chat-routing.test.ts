import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { startFakeProvider, type FakeProvider } from "./support/fake-provider.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";

let gw: TestGateway;
const fakes: Record<string, FakeProvider> = {};
let key: string;
let keyHash: string;

const endpoint = (provider: string, upstream: string, prompt: string, extra: Record<string, unknown> = {}) => ({
  provider,
  upstream_model: upstream,
  pricing: { prompt, completion: prompt },
  supported_parameters: ["temperature"],
  ...extra,
});

beforeAll(async () => {
  for (const name of ["alpha", "beta", "gamma"]) fakes[name] = await startFakeProvider(name);
  const catalog = {
    providers: [
      { slug: "alpha", name: "Alpha", adapter: "openai-compatible", base_url: fakes.alpha!.baseUrl, requires_api_key: false },
      {
        slug: "beta",
        name: "Beta",
        adapter: "openai-compatible",
        base_url: fakes.beta!.baseUrl,
        requires_api_key: false,
        data_policy: { training: true, retains_prompts: true, zdr: false },
      },
      {
        slug: "gamma",
        name: "Gamma",
        adapter: "openai-compatible",
        base_url: fakes.gamma!.baseUrl,
        requires_api_key: false,
        data_policy: { training: false, retains_prompts: false, zdr: true },
      },
    ],
    models: [
      {
        id: "route/m",
        name: "Routed",
        context_length: 8000,
        endpoints: [
          endpoint("alpha", "ok", "0.000001", { quantization: "fp16", supported_parameters: ["temperature", "tools"] }),
          endpoint("beta", "ok", "0.000002", { quantization: "fp8" }),
          endpoint("gamma", "ok", "0.000003", { supported_parameters: ["temperature", "tools", "seed"] }),
        ],
      },
      { id: "route/slow", name: "Slow", context_length: 8000, endpoints: [endpoint("alpha", "slow", "0.000001")] },
      { id: "route/stall", name: "Stall", context_length: 8000, endpoints: [endpoint("alpha", "stall", "0.000001")] },
    ],
  };
  gw = await startTestGateway({ ...(await catalogEnv(catalog)), REQUEST_TIMEOUT_MS: "4000" });
  const made = await gw.call("POST", "/keys", { body: { name: "routing" } });
  key = String(made.body.key);
  keyHash = String(made.body.data?.hash);
});
afterAll(async () => {
  await gw?.stop();
  for (const fake of Object.values(fakes)) await fake.stop();
});

const messages = [{ role: "user", content: "Hi" }];
/** The provider that served a request with these routing preferences (or the error it met). */
async function served(provider: Record<string, unknown>, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
  const res = await gw.call("POST", "/chat/completions", { key, body: { model: "route/m", messages, provider, ...extra }, headers });
  if (res.status !== 200) return { status: res.status, message: String((res.body.error as { message: string }).message) };
  const id = String(res.body.id);
  const stored = (await gw.call("GET", `/generation?id=${id}`, { key })).body.data as unknown as { provider_name: string; session_id: string | null };
  return { status: 200, provider: stored.provider_name, session: stored.session_id };
}

describe("provider preferences through the router", () => {
  it("honours sort, order, only, ignore, quantizations, data_collection, zdr and require_parameters", async () => {
    expect(await served({ sort: "price" })).toMatchObject({ provider: "alpha" });
    expect(await served({ order: ["gamma", "alpha"] })).toMatchObject({ provider: "gamma" });
    expect(await served({ only: ["beta"] })).toMatchObject({ provider: "beta" });
    expect(await served({ ignore: ["alpha", "beta"] })).toMatchObject({ provider: "gamma" });
    expect(await served({ quantizations: ["fp8"], sort: "price" })).toMatchObject({ provider: "beta" });
    expect(await served({ data_collection: "deny", ignore: ["alpha"] })).toMatchObject({ provider: "gamma" });
    expect(await served({ zdr: true })).toMatchObject({ provider: "gamma" });
    expect(await served({ require_parameters: true }, { seed: 7 })).toMatchObject({ provider: "gamma" });
    expect(await served({ max_price: { prompt: "1.5" }, sort: "price" })).toMatchObject({ provider: "alpha" });
  });

  it("records the endpoints a generation's routing left out, and why", async () => {
    const res = await gw.call("POST", "/chat/completions", { key, body: { model: "route/m", messages, provider: { ignore: ["alpha"], zdr: true } } });
    expect(res.status).toBe(200);
    const stored = (await gw.call("GET", `/generation?id=${String(res.body.id)}`, { key })).body.data!;
    expect(stored.provider_name).toBe("gamma");
    expect(stored.excluded_endpoints).toEqual(expect.arrayContaining([expect.stringContaining("alpha: in provider.ignore"), expect.stringMatching(/beta.*zdr/)]));
    const plain = await gw.call("POST", "/chat/completions", { key, body: { model: "route/m", messages } });
    expect((await gw.call("GET", `/generation?id=${String(plain.body.id)}`, { key })).body.data).not.toHaveProperty("excluded_endpoints");
  });

  it("answers 404 naming the constraint that excluded each endpoint", async () => {
    const none = await served({ only: ["gamma"], ignore: ["gamma"] });
    expect(none.status).toBe(404);
    expect(none.message).toContain("alpha: not in provider.only");
    const dear = await served({ max_price: { prompt: "0.1" } });
    expect(dear.message).toContain("gamma: prompt price above provider.max_price");
    const strict = await served({ order: ["gamma"], allow_fallbacks: false, ignore: ["gamma"] });
    expect(strict.status).toBe(404);
    expect(strict.message).toContain("alpha: not in provider.order (provider.allow_fallbacks is false)");
  });

  it("keeps a session on one provider, the body's session_id winning over x-session-id", async () => {
    const first = await served({}, { session_id: "conversation-1" });
    for (let i = 0; i < 10; i++) expect(await served({}, { session_id: "conversation-1" })).toMatchObject({ provider: first.provider });
    const both = await served({}, { session_id: "conversation-1" }, { "x-session-id": "header-session" });
    expect(both).toMatchObject({ provider: first.provider, session: "conversation-1" });
    expect(await served({}, {}, { "x-session-id": "header-session" })).toMatchObject({ session: "header-session" });
  });

  it("keeps to the key's guardrail, and says so when it excludes everything", async () => {
    const guardrail = await gw.call("POST", "/guardrails", { body: { name: "gamma only", allowed_providers: ["gamma"] } });
    const id = String(guardrail.body.data?.id);
    expect((await gw.call("POST", `/guardrails/${id}/assignments/keys`, { body: { key_hashes: [keyHash] } })).status).toBe(200);
    try {
      for (let i = 0; i < 3; i++) expect(await served({ sort: "price" })).toMatchObject({ provider: "gamma" });
      const excluded = await served({ only: ["alpha"] });
      expect(excluded.status).toBe(404);
      expect(excluded.message).toContain('alpha: guardrail "gamma only": allows only providers gamma');
      expect(excluded.message).toContain("gamma: not in provider.only");
    } finally {
      await gw.call("DELETE", `/guardrails/${id}`);
    }
  });
});

describe("waiting on a provider", () => {
  it("sends keep-alive comments while a stream waits for its first byte", async () => {
    const res = await fetch(`${gw.apiUrl}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "route/slow", messages, stream: true }),
    });
    const text = await res.text();
    expect(text.startsWith(": OPENROUTER PROCESSING\n\n")).toBe(true);
    expect(text.trimEnd().endsWith("data: [DONE]")).toBe(true);
  });

  it("gives up at the request deadline with a 524", async () => {
    const started = Date.now();
    const res = await gw.call("POST", "/chat/completions", { key, body: { model: "route/stall", messages } });
    expect(res.status).toBe(524);
    expect(Date.now() - started).toBeLessThan(6000);
  });
});
