import type { ProviderPreferences, ResolvedEndpoint, ResolvedModel } from "@switchyard/contracts";
import { describe, expect, it } from "vitest";
import { orderCandidates } from "./candidates.js";
import type { EndpointFigures } from "./endpoint-stats/stats.js";
import { acrossModels } from "./stats-order.js";

const endpoint = (provider: string, prompt: string, extra: Partial<ResolvedEndpoint> = {}): ResolvedEndpoint => ({
  provider,
  adapter: "openai-compatible",
  base_url: "http://127.0.0.1:9/v1",
  upstream_model: "m",
  pricing: { prompt, completion: prompt },
  context_length: 1000,
  max_completion_tokens: null,
  max_inputs: null,
  supported_parameters: ["temperature"],
  region: "us",
  zdr: false,
  data_policy: { training: false, retains_prompts: false, zdr: false, publishes_free_prompts: false },
  quantization: null,
  api_key_env: [],
  requires_api_key: false,
  operator_key: true,
  byok: null,
  ...extra,
});
const resolved = (endpoints: ResolvedEndpoint[]): ResolvedModel => ({
  requested: "v/m",
  model: "v/m",
  variant: null,
  sort: null,
  input_modalities: ["text"],
  output_modalities: ["text"],
  distillable: false,
  preset: null,
  endpoints,
  excluded: [],
  guardrail_ids: [],
  content_filters: [],
  disabled_server_tools: [],
  response_cache_disabled: false,
  broadcast: false,
  io_logging: null,
});
const base = { sessionId: undefined, requestedParameters: [], coolingDown: () => false };
const providers = (r: ReturnType<typeof orderCandidates>) => r.candidates.map((c) => c.endpoint.provider);

describe("candidate order", () => {
  const three = resolved([endpoint("a", "0.00001"), endpoint("b", "0.000001"), endpoint("c", "0.000005", { data_policy: { training: true, retains_prompts: true, zdr: false, publishes_free_prompts: false } })]);

  it("sorts by price when asked and honours provider.order and allow_fallbacks", () => {
    expect(providers(orderCandidates(three, { ...base, preferences: { sort: "price" } }))).toEqual(["b", "c", "a"]);
    expect(providers(orderCandidates(three, { ...base, preferences: { order: ["c", "a"] } })).slice(0, 2)).toEqual(["c", "a"]);
    expect(providers(orderCandidates(three, { ...base, preferences: { order: ["c"], allow_fallbacks: false } }))).toEqual(["c"]);
  });

  it("keeps one session on one order (sticky routing)", () => {
    const first = providers(orderCandidates(three, { ...base, sessionId: "s-1", preferences: undefined }));
    for (let i = 0; i < 10; i++) expect(providers(orderCandidates(three, { ...base, sessionId: "s-1", preferences: undefined }))).toEqual(first);
  });

  it("favours cheap endpoints in the default price-weighted order", () => {
    let cheapFirst = 0;
    for (let i = 0; i < 500; i++) if (providers(orderCandidates(three, { ...base, preferences: undefined }))[0] === "b") cheapFirst++;
    expect(cheapFirst).toBeGreaterThan(200);
  });

  it("drops endpoints the request's preferences exclude, saying why", () => {
    const r = orderCandidates(three, {
      ...base,
      requestedParameters: ["temperature", "seed"],
      preferences: { ignore: ["a"], data_collection: "deny", max_price: { prompt: "0.000002" }, require_parameters: true },
    });
    expect(r.candidates).toEqual([]);
    expect(r.dropped).toEqual(["a: in provider.ignore", "b: does not support seed (provider.require_parameters)", "c: prompt price above provider.max_price"]);
    expect(providers(orderCandidates(three, { ...base, preferences: { data_collection: "deny", sort: "price" } }))).toEqual(["b", "a"]);
  });

  it("tries resting endpoints last", () => {
    const r = orderCandidates(three, { ...base, preferences: { sort: "price" }, coolingDown: (e) => e.provider === "b" });
    expect(providers(r)).toEqual(["c", "a", "b"]);
  });
});

describe("candidate order on live figures", () => {
  const figures = (latencyMs: number | null, throughput: number | null, extra: Partial<EndpointFigures> = {}): EndpointFigures => ({
    latency: latencyMs === null ? null : { p50: latencyMs, p75: latencyMs * 1.2, p90: latencyMs * 1.5, p99: latencyMs * 2 },
    throughput: throughput === null ? null : { p50: throughput, p75: throughput * 0.9, p90: throughput * 0.8, p99: throughput * 0.5 },
    uptime5m: 100,
    uptime30m: 100,
    uptime1d: 100,
    recentUptime: 100,
    recentAttempts: 10,
    ...extra,
  });
  // a is cheap and slow, b dear and fast, c the cheapest and unmeasured.
  const three = resolved([endpoint("a", "0.000001"), endpoint("b", "0.00001"), endpoint("c", "0.0000005")]);
  const measured: Record<string, EndpointFigures> = { a: figures(900, 20), b: figures(150, 90) };
  const live = { ...base, figuresOf: (provider: string) => measured[provider] };

  it("sorts by latency or throughput, measured endpoints first, and carries the figures", () => {
    expect(providers(orderCandidates(three, { ...live, preferences: { sort: "latency" } }))).toEqual(["b", "a", "c"]);
    expect(providers(orderCandidates(three, { ...live, preferences: { sort: { by: "throughput" } } }))).toEqual(["b", "a", "c"]);
    expect(providers(orderCandidates(three, { ...live, preferences: { sort: "price" } }))).toEqual(["c", "a", "b"]);
    // `:nitro` resolves with the throughput sort.
    expect(providers(orderCandidates({ ...three, sort: "throughput" }, { ...live, preferences: undefined }))).toEqual(["b", "a", "c"]);
    expect(orderCandidates(three, { ...live, preferences: { sort: "latency" } }).candidates[0]!.figures?.latency?.p50).toBe(150);
  });

  it("puts endpoints that miss a preferred latency or throughput behind the others, whatever the sort", () => {
    const slowBehind = (preferences: ProviderPreferences) => providers(orderCandidates(three, { ...live, preferences: { sort: "price", ...preferences } }));
    expect(slowBehind({ preferred_max_latency: 0.5 })).toEqual(["c", "b", "a"]);
    expect(slowBehind({ preferred_max_latency: { p90: 1.2 } })).toEqual(["c", "b", "a"]);
    expect(slowBehind({ preferred_max_latency: { p90: 1.5 } })).toEqual(["c", "a", "b"]);
    expect(slowBehind({ preferred_min_throughput: 50 })).toEqual(["c", "b", "a"]);
    expect(slowBehind({ preferred_min_throughput: { p99: 5 } })).toEqual(["c", "a", "b"]);
    // An explicit order is the caller's own: the preferences do not reorder it.
    expect(slowBehind({ preferred_max_latency: 0.5, order: ["a", "b"] }).slice(0, 2)).toEqual(["a", "b"]);
  });

  it("sends an endpoint with a recent outage behind the others in the default order, and back once it recovers", () => {
    const cheapest = resolved([endpoint("cheap", "0.0000001"), endpoint("dear", "0.00002")]);
    const firstOf = (f: Record<string, EndpointFigures>) => {
      let cheapFirst = 0;
      for (let i = 0; i < 200; i++) if (providers(orderCandidates(cheapest, { ...base, preferences: undefined, figuresOf: (p) => f[p] }))[0] === "cheap") cheapFirst++;
      return cheapFirst;
    };
    expect(firstOf({})).toBeGreaterThan(180);
    expect(firstOf({ cheap: figures(100, 50, { recentUptime: 40, recentAttempts: 5, uptime5m: 60 }) })).toBe(0);
    // Too few attempts to call it an outage.
    expect(firstOf({ cheap: figures(100, 50, { recentUptime: 0, recentAttempts: 2, uptime5m: 100 }) })).toBeGreaterThan(180);
    expect(firstOf({ cheap: figures(100, 50, { recentUptime: 100, recentAttempts: 5, uptime5m: 90 }) })).toBeGreaterThan(150);
  });

  it("sorts every model's endpoints as one list with partition none, and prefers what meets the thresholds across models", () => {
    const first = resolved([endpoint("a", "0.000001")]);
    const second = { ...resolved([endpoint("b", "0.000001")]), model: "v/fallback" };
    const both = (preferences: ProviderPreferences) => {
      const candidates = [first, second].flatMap((r) => orderCandidates(r, { ...live, preferences }).candidates);
      return acrossModels(candidates, preferences, () => false).map((c) => `${c.model}@${c.endpoint.provider}`);
    };
    expect(both({ sort: { by: "latency", partition: "model" } })).toEqual(["v/m@a", "v/fallback@b"]);
    expect(both({ sort: { by: "latency", partition: "none" } })).toEqual(["v/fallback@b", "v/m@a"]);
    expect(both({ preferred_max_latency: 0.5 })).toEqual(["v/fallback@b", "v/m@a"]);
  });
});
