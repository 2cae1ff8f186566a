import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { startFakeProvider, type FakeProvider } from "./support/fake-provider.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";

/**
 * Provider preferences that decide which endpoint serves a request and at what price, through the router.
 * t/three has alpha ($1/M standard, $10/M priority), beta ($2/M, $3/M priority) and gamma ($5/M, no
 * priority price). delta is in the catalog but serves only t/delta. The fakes report 17 tokens a request.
 */
let gw: TestGateway;
const fakes: Record<string, FakeProvider> = {};
let key: string;
const tokens = 17;
const perMillion = (usd: number) => String(usd / 1e6);

const endpoint = (provider: string, standard: number, priority?: number) => ({
  provider,
  upstream_model: "ok",
  pricing: { prompt: perMillion(standard), completion: perMillion(standard) },
  ...(priority === undefined ? {} : { service_tiers: { priority: { prompt: perMillion(priority), completion: perMillion(priority) } } }),
  supported_parameters: ["temperature"],
});

beforeAll(async () => {
  for (const name of ["alpha", "beta", "gamma", "delta"]) fakes[name] = await startFakeProvider(name);
  const provider = (slug: string, name: string) => ({ slug, name, adapter: "openai-compatible", base_url: fakes[slug]!.baseUrl, requires_api_key: false });
  const catalog = {
    providers: [provider("alpha", "Alpha"), provider("beta", "Beta"), provider("gamma", "Gamma Cloud"), provider("delta", "Delta")],
    models: [
      { id: "t/three", name: "Three", context_length: 8000, endpoints: [endpoint("alpha", 1, 10), endpoint("beta", 2, 3), endpoint("gamma", 5)] },
      { id: "t/delta", name: "Delta", context_length: 8000, endpoints: [endpoint("delta", 1)] },
    ],
  };
  gw = await startTestGateway(await catalogEnv(catalog));
  key = String((await gw.call("POST", "/keys", { body: { name: "routing preferences" } })).body.key);
});
afterAll(async () => {
  await gw?.stop();
  for (const fake of Object.values(fakes)) await fake.stop();
});

const messages = [{ role: "user", content: "Hi" }];
const chat = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  gw.call("POST", "/chat/completions", { key, body: { model: "t/three", messages, ...body }, headers });

/** The provider that served a request and what it was charged, or the status and message it was refused with. */
async function served(body: Record<string, unknown>, headers: Record<string, string> = {}) {
  const res = await chat(body, headers);
  if (res.status !== 200) return { status: res.status, message: String(res.body.error?.message) };
  const stored = (await gw.call("GET", `/generation?id=${String(res.body.id)}`, { key })).body.data as unknown as { provider_name: string; session_id: string | null };
  return { status: 200, provider: stored.provider_name, cost: (res.body.usage as { cost: number }).cost, session: stored.session_id };
}

describe("prices of the requested service tier", () => {
  it("applies provider.max_price to the tier's prices, and charges the endpoint it kept", async () => {
    const capped = await served({ service_tier: "priority", provider: { max_price: { prompt: "5", completion: "5" }, order: ["alpha", "beta"] } });
    expect(capped).toMatchObject({ status: 200, provider: "beta" });
    expect(capped.cost).toBeCloseTo((tokens * 3) / 1e6, 12);
    // The standard tier is still compared at the standard prices.
    expect(await served({ provider: { max_price: { prompt: "1.5", completion: "1.5" }, order: ["beta", "alpha"] } })).toMatchObject({ provider: "alpha" });
  });

  it("sorts by the tier's prices under provider.sort price, alone or across models", async () => {
    for (const sort of ["price", { by: "price" }, { by: "price", partition: "none" }]) {
      const res = await served({ service_tier: "priority", provider: { sort } });
      expect(res).toMatchObject({ status: 200, provider: "beta" });
      expect(res.cost).toBeCloseTo((tokens * 3) / 1e6, 12);
    }
    expect(await served({ service_tier: "fast", provider: { sort: "price" } })).toMatchObject({ provider: "beta" });
    expect(await served({ provider: { sort: "price" } })).toMatchObject({ provider: "alpha" });
  });

  it("weights the default order by the tier's prices", async () => {
    const providers: string[] = [];
    for (let i = 0; i < 20; i++) providers.push(String((await served({ service_tier: "priority", session_id: `tier-weight-${i}` })).provider));
    // At $3/M against $10/M beta goes first in about nine draws of ten; at the standard prices alpha would in seven.
    expect(providers.filter((p) => p === "beta").length).toBeGreaterThanOrEqual(15);
  });
});

describe("the provider object's keys", () => {
  it.each([
    [{ allow_fallback: false }, "provider: unknown field allow_fallback"],
    [{ alow_fallbacks: false }, "provider: unknown field alow_fallbacks"],
    [{ sortt: "price" }, "provider: unknown field sortt"],
    [{ sort: { by: "price", partiton: "none" } }, "provider.sort: unknown field partiton"],
    [{ preferred_max_latency: { p95: 1 } }, "provider.preferred_max_latency: unknown field p95"],
    [{ preferred_min_throughput: { p50: 10, p999: 1 } }, "provider.preferred_min_throughput: unknown field p999"],
  ])("refuses %j with 400 naming the key, on chat, responses and messages", async (provider, named) => {
    const before = Object.values(fakes).reduce((sum, f) => sum + f.requests.length, 0);
    const answers = [
      await chat({ provider }),
      await gw.call("POST", "/responses", { key, body: { model: "t/three", input: "Hi", provider } }),
      await gw.call("POST", "/messages", { key, body: { model: "t/three", max_tokens: 16, messages, provider } }),
    ];
    expect(answers.map((a) => a.status)).toEqual([400, 400, 400]);
    for (const a of answers) expect(JSON.stringify(a.body)).toContain(named);
    expect(Object.values(fakes).reduce((sum, f) => sum + f.requests.length, 0)).toBe(before);
  });

  it("takes every key OpenRouter documents for the provider object", async () => {
    const provider = {
      order: ["beta"],
      only: ["alpha", "beta"],
      ignore: ["gamma"],
      allow_fallbacks: true,
      require_parameters: false,
      data_collection: "allow",
      zdr: false,
      enforce_distillable_text: false,
      quantizations: ["unknown"],
      sort: { by: "price", partition: "model" },
      max_price: { prompt: "5", completion: "5" },
      preferred_min_throughput: { p50: 1, p75: null, p90: 0, p99: 0 },
      preferred_max_latency: { p50: 100, p75: 100, p90: 100, p99: null },
    };
    expect(await served({ provider })).toMatchObject({ status: 200, provider: "beta" });
  });

  it.each([
    [{ preferred_max_latency: -5 }, "provider.preferred_max_latency"],
    [{ preferred_min_throughput: -1 }, "provider.preferred_min_throughput"],
    [{ preferred_max_latency: { p90: -1 } }, "provider.preferred_max_latency.p90"],
    [{ preferred_min_throughput: { p50: -0.5 } }, "provider.preferred_min_throughput.p50"],
  ])("refuses the negative figure %j with 400 naming it", async (provider, named) => {
    const res = await chat({ provider });
    expect(res.status).toBe(400);
    expect(res.body.error?.message).toContain(named);
  });
});

describe("provider names in order, only and ignore", () => {
  it("matches a provider's slug or display name whatever its case", async () => {
    expect(await served({ provider: { ignore: ["Alpha"], order: ["alpha", "beta"] } })).toMatchObject({ provider: "beta" });
    expect(await served({ provider: { ignore: [" ALPHA "], order: ["alpha", "beta"] } })).toMatchObject({ provider: "beta" });
    expect(await served({ provider: { only: ["Gamma Cloud"] } })).toMatchObject({ provider: "gamma" });
    expect(await served({ provider: { only: ["gamma cloud", "Beta"], order: ["GAMMA"] } })).toMatchObject({ provider: "gamma" });
    expect(await served({ provider: { order: ["Beta"], allow_fallbacks: false } })).toMatchObject({ provider: "beta" });
  });

  it.each([
    [{ ignore: ["nobody"] }, "provider.ignore[0]"],
    [{ order: ["alpha", "Nobody Inc"] }, "provider.order[1]"],
    [{ only: ["beta", "gamma", "omega"] }, "provider.only[2]"],
  ])("refuses %j, which names no provider of the catalog, with 400 naming the entry", async (provider, named) => {
    const res = await chat({ provider });
    expect(res.status).toBe(400);
    expect(res.body.error?.message).toContain(named);
  });

  it("says why each endpoint was left out when provider.order without fallbacks names none of them", async () => {
    const res = await served({ provider: { order: ["delta"], allow_fallbacks: false } });
    expect(res.status).toBe(404);
    expect(res.message).not.toContain("none configured");
    for (const slug of ["alpha", "beta", "gamma"]) expect(res.message).toContain(`${slug}: not in provider.order (provider.allow_fallbacks is false)`);
  });
});

describe("the x-session-id header", () => {
  it("refuses one longer than 256 characters with 400 naming it, as it refuses session_id", async () => {
    const long = await served({}, { "x-session-id": "s".repeat(257) });
    expect(long.status).toBe(400);
    expect(long.message).toContain("x-session-id");
    expect((await served({ session_id: "s".repeat(257) })).status).toBe(400);
    expect(await served({}, { "x-session-id": "s".repeat(256) })).toMatchObject({ status: 200, session: "s".repeat(256) });
  });
});
