import { OpenRouter } from "@openrouter/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { eventually } from "./support/eventually.js";
import { pacedCatalog, startPacedProvider, type Pace, type PacedProvider } from "./support/fake-paced.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";

/** fast: first token after 150 ms, then 100 tokens/s; slow: 600 ms, then 25 tokens/s. The slow one is cheaper. */
const paces: Record<string, Pace> = {
  fast: { firstTokenMs: 150, tokensPerSecond: 100, tokens: 32 },
  slow: { firstTokenMs: 600, tokensPerSecond: 25, tokens: 32 },
  cheap: { firstTokenMs: 5, tokensPerSecond: 1000, tokens: 4 },
  dear: { firstTokenMs: 5, tokensPerSecond: 1000, tokens: 4 },
};
const messages = [{ role: "user", content: "Hi" }];

describe("live endpoint statistics in one gateway", () => {
  let gw: TestGateway;
  let upstream: PacedProvider;
  let key: string;

  beforeAll(async () => {
    upstream = await startPacedProvider(paces);
    gw = await startTestGateway({
      ...(await catalogEnv(pacedCatalog(upstream.baseUrl))),
      ENDPOINT_STATS_INTERVAL_MS: "250",
      ENDPOINT_STATS_BUCKET_MS: "2000",
      UPSTREAM_FAILURE_COOLDOWN_MS: "100",
    });
    key = String((await gw.call("POST", "/keys", { body: { name: "stats" } })).body.key);
  });
  afterAll(async () => {
    await gw?.stop();
    await upstream?.stop();
  });

  /** A buffered chat; `provider` is the endpoint `openrouter_metadata` says served it. */
  const chat = async (model: string, extra: Record<string, unknown> = {}) => {
    const res = await gw.call("POST", "/chat/completions", { key, body: { model, messages, stream: false, ...extra }, headers: { "x-openrouter-metadata": "enabled" } });
    expect(res.status).toBe(200);
    const metadata = res.body.openrouter_metadata as { summary: string; endpoints: { available: Array<Record<string, unknown>> } };
    return { metadata, provider: String(metadata.endpoints.available.find((e) => e.selected)?.provider) };
  };
  const streamed = async (only: string) => {
    const res = await fetch(`${gw.apiUrl}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "paced/m", messages, stream: true, provider: { only: [only] } }),
    });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain("[DONE]");
  };

  it("publishes each endpoint's measured latency, throughput and uptime, within 20% of what the provider did", async () => {
    const sdk = new OpenRouter({ apiKey: key, serverURL: gw.apiUrl });
    const before = await sdk.endpoints.list({ author: "paced", slug: "m" });
    expect(before.data.endpoints.map((e) => [e.tag, e.latencyLast30m, e.uptimeLast30m])).toEqual([
      ["fast", null, null],
      ["slow", null, null],
    ]);
    for (let round = 0; round < 4; round++) await Promise.all([streamed("fast"), streamed("slow"), streamed("fast"), streamed("slow")]);
    await eventually(async () => (await sdk.endpoints.list({ author: "paced", slug: "m" })).data.endpoints.every((e) => e.uptimeLast5m === 100), 10_000);
    const listed = Object.fromEntries((await sdk.endpoints.list({ author: "paced", slug: "m" })).data.endpoints.map((e) => [e.tag, e]));
    for (const name of ["fast", "slow"]) {
      const e = listed[name]!;
      expect(e.latencyLast30m!.p50 / paces[name]!.firstTokenMs).toBeGreaterThan(0.8);
      expect(e.latencyLast30m!.p50 / paces[name]!.firstTokenMs).toBeLessThan(1.2);
      expect(e.throughputLast30m!.p50 / paces[name]!.tokensPerSecond).toBeGreaterThan(0.8);
      expect(e.throughputLast30m!.p50 / paces[name]!.tokensPerSecond).toBeLessThan(1.2);
      expect([e.uptimeLast5m, e.uptimeLast30m, e.uptimeLast1d]).toEqual([100, 100, 100]);
    }
  });

  it("routes on them: sort by latency or throughput picks the faster, a preferred latency puts the slower behind", async () => {
    // By price the slow endpoint goes first; the figures turn that round.
    expect((await chat("paced/m", { provider: { sort: "price" } })).provider).toBe("slow");
    expect((await chat("paced/m", { provider: { sort: "latency" } })).provider).toBe("fast");
    expect((await chat("paced/m", { provider: { sort: { by: "throughput", partition: "none" } } })).provider).toBe("fast");
    expect((await chat("paced/m:nitro")).provider).toBe("fast");
    expect((await chat("paced/m", { provider: { sort: "price", preferred_max_latency: 0.4 } })).provider).toBe("fast");
    expect((await chat("paced/m", { provider: { sort: "price", preferred_min_throughput: { p50: 60 } } })).provider).toBe("fast");
    // A threshold both meet leaves the price order alone.
    expect((await chat("paced/m", { provider: { sort: "price", preferred_max_latency: { p50: 5 } } })).provider).toBe("slow");

    const told = (await chat("paced/m", { provider: { sort: "latency" } })).metadata;
    expect(told.summary).toContain("order: sort by latency");
    const [fast, slow] = told.endpoints.available;
    expect(fast).toMatchObject({ provider: "fast", selected: true, uptime_last_5m: 100 });
    expect(slow).toMatchObject({ provider: "slow", selected: false });
    expect(Number(fast!.latency_p50)).toBeLessThan(Number(slow!.latency_p50));
  });

  it("sends an endpoint whose uptime drops behind in the default order within a minute, and lets it back once it answers", async () => {
    const cheapCalls = () => upstream.calls.filter((m) => m === "cheap").length;
    const servedBy = async (n: number) => {
      const by: string[] = [];
      // Spaced past the 100 ms cool-down, so only the statistics keep a failing endpoint behind.
      for (let i = 0; i < n; i++) {
        by.push((await chat("paced/flap")).provider);
        await new Promise((r) => setTimeout(r, 150));
      }
      return by;
    };
    expect((await servedBy(5)).filter((p) => p === "cheap").length).toBeGreaterThanOrEqual(4);

    paces.cheap!.failing = true;
    const failedFrom = Date.now();
    // Each request tries cheap, which fails, and dear serves; once the figures say so, cheap is not tried first.
    const behindAfter = await eventually(async () => {
      const calls = cheapCalls();
      await servedBy(3);
      return cheapCalls() === calls;
    }, 60_000);
    expect(Date.now() - failedFrom).toBeLessThan(60_000);
    expect(behindAfter).toBeLessThan(60_000);

    paces.cheap!.failing = false;
    // Behind, it gets no first tries; once its failures leave the recent window it goes first again.
    await eventually(async () => (await servedBy(3)).every((p) => p === "cheap"), 30_000);
  });
});
