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
      preferences: { ignore: ["a"], data_collection: "deny", max_price: { prompt: "2" }, require_parameters: true },
    });
    expect(r.candidates).toEqual([]);
    expect(r.dropped).toEqual(["a: in provider.ignore", "b: does not support seed (provider.require_parameters)", "c: prompt price above provider.max_price"]);
    expect(providers(orderCandidates(three, { ...base, preferences: { data_collection: "deny", sort: "price" } }))).toEqual(["b", "a"]);
  });

  it("counts a parameter's alias as the parameter under require_parameters", () => {
    const require = { require_parameters: true };
    const listed = resolved([endpoint("a", "0.000001", { supported_parameters: ["max_tokens", "reasoning"] }), endpoint("b", "0.000001", { supported_parameters: ["max_completion_tokens"] })]);
    const asked = (requestedParameters: string[]) => orderCandidates(listed, { ...base, requestedParameters, preferences: require });
    expect(providers(asked(["max_completion_tokens"])).sort()).toEqual(["a", "b"]);
    expect(providers(asked(["max_tokens"])).sort()).toEqual(["a", "b"]);
    expect(providers(asked(["reasoning_effort"]))).toEqual(["a"]);
    expect(asked(["reasoning_effort"]).dropped).toEqual(["b: does not support reasoning_effort (provider.require_parameters)"]);
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

describe("prices of every unit an endpoint bills", () => {
  const priced = (provider: string, pricing: Record<string, string>) => endpoint(provider, "0", { pricing: { prompt: "0", completion: "0", request: "0", image: "0", ...pricing } });
  const model = (output: string, endpoints: ResolvedEndpoint[]): ResolvedModel => ({ ...resolved(endpoints), output_modalities: [output] });
  // The dear endpoint comes first in the catalog, so an order that ignores its price keeps it first.
  const kinds: Array<[string, string, string, string]> = [
    ["rerank", "search_unit", "0.002", "0.001"],
    ["speech", "character", "0.00003", "0.000015"],
    ["speech", "audio_output", "0.000024", "0.000012"],
    ["transcription", "audio_second", "0.0002", "0.0001"],
    ["image", "image_output", "0.08", "0.04"],
    ["embeddings", "request", "0.002", "0.001"],
  ];

  it.each(kinds)("sorts %s endpoints by their %s price", (output, unit, dear, cheap) => {
    const two = model(output, [priced("dear", { [unit]: dear }), priced("cheap", { [unit]: cheap })]);
    expect(providers(orderCandidates(two, { ...base, preferences: { sort: "price" } }))).toEqual(["cheap", "dear"]);
    expect(providers(orderCandidates(two, { ...base, preferences: { sort: { by: "price" } } }))).toEqual(["cheap", "dear"]);
    // `:floor` resolves with the price sort.
    expect(providers(orderCandidates({ ...two, sort: "price" }, { ...base, preferences: undefined }))).toEqual(["cheap", "dear"]);
  });

  it.each(kinds)("gives the cheaper %s endpoint more of the default order by its %s price", (output, unit, dear, cheap) => {
    const two = model(output, [priced("dear", { [unit]: String(Number(dear) * 2) }), priced("cheap", { [unit]: cheap })]);
    let cheapFirst = 0;
    for (let i = 0; i < 400; i++) if (providers(orderCandidates(two, { ...base, sessionId: `s-${i}`, preferences: undefined }))[0] === "cheap") cheapFirst++;
    expect(cheapFirst).toBeGreaterThan(300);
  });

  it("orders unmeasured endpoints behind measured ones by the price of their own units", () => {
    const two = model("rerank", [priced("dear", { search_unit: "0.002" }), priced("cheap", { search_unit: "0.001" })]);
    expect(providers(orderCandidates(two, { ...base, preferences: { sort: "latency" } }))).toEqual(["cheap", "dear"]);
  });

  it("does not compare a price the request's kind does not bill", () => {
    // A chat request bills neither per input image nor per character: the token prices decide.
    const chat = model("text", [priced("a", { prompt: "0.000001", completion: "0.000001", image: "0.5" }), priced("b", { prompt: "0.000002", completion: "0.000002" })]);
    expect(providers(orderCandidates(chat, { ...base, preferences: { sort: "price" } }))).toEqual(["a", "b"]);
    // A per-request price is billed on every kind and counts as one unit of its own.
    const perRequest = model("text", [priced("a", { prompt: "0.000001", completion: "0.000001", request: "0.01" }), priced("b", { prompt: "0.000002", completion: "0.000002" })]);
    expect(providers(orderCandidates(perRequest, { ...base, preferences: { sort: "price" } }))).toEqual(["b", "a"]);
  });

  it("sorts across models of a request by each one's own units (partition none)", () => {
    const first = model("rerank", [priced("dear", { search_unit: "0.002" })]);
    const second = { ...model("rerank", [priced("cheap", { search_unit: "0.001" })]), model: "v/fallback" };
    const preferences: ProviderPreferences = { sort: { by: "price", partition: "none" } };
    const candidates = [first, second].flatMap((r) => orderCandidates(r, { ...base, preferences }).candidates);
    expect(acrossModels(candidates, preferences, () => false).map((c) => `${c.model}@${c.endpoint.provider}`)).toEqual(["v/fallback@cheap", "v/m@dear"]);
  });
});

describe("provider.max_price on every billed unit", () => {
  const priced = (provider: string, pricing: Record<string, string>) => endpoint(provider, "0", { pricing: { prompt: "0", completion: "0", request: "0", image: "0", ...pricing } });
  const units = ["search_unit", "character", "audio_second", "audio_output", "image_output", "web_search"] as const;

  it.each(units)("skips an endpoint whose %s price is above the limit, saying why", (unit) => {
    const two = resolved([priced("dear", { [unit]: "0.002" }), priced("cheap", { [unit]: "0.001" })]);
    const r = orderCandidates(two, { ...base, preferences: { max_price: { [unit]: "0.0015" } } });
    expect(providers(r)).toEqual(["cheap"]);
    expect(r.dropped).toEqual([`dear: ${unit} price above provider.max_price`]);
    const none = orderCandidates(two, { ...base, preferences: { max_price: { [unit]: "0.0005" } } });
    expect(none.candidates).toEqual([]);
    expect(none.dropped).toEqual([`dear: ${unit} price above provider.max_price`, `cheap: ${unit} price above provider.max_price`]);
  });

  it("bounds a token price the endpoint does not list by the price it bills such tokens at", () => {
    // Without prices of their own, cached and audio tokens cost `prompt` and reasoning tokens `completion`.
    const plain = resolved([priced("plain", { prompt: "0.000002", completion: "0.000004" })]);
    const dropped = (max_price: NonNullable<ProviderPreferences["max_price"]>) => orderCandidates(plain, { ...base, preferences: { max_price } }).dropped;
    expect(dropped({ input_cache_read: "1" })).toEqual(["plain: input_cache_read price above provider.max_price"]);
    expect(dropped({ input_cache_write_1h: "1" })).toEqual(["plain: input_cache_write_1h price above provider.max_price"]);
    expect(dropped({ audio: "0.000001" })).toEqual(["plain: audio price above provider.max_price"]);
    expect(dropped({ internal_reasoning: "3" })).toEqual(["plain: internal_reasoning price above provider.max_price"]);
    expect(dropped({ input_cache_read: "2", internal_reasoning: "4", audio: "0.000002", search_unit: "0" })).toEqual([]);
    const cached = resolved([priced("cached", { prompt: "0.000002", completion: "0.000004", input_cache_read: "0.0000002" })]);
    expect(orderCandidates(cached, { ...base, preferences: { max_price: { input_cache_read: "1" } } }).dropped).toEqual([]);
  });

  it("reads prompt and completion limits per million tokens, as OpenRouter's clients send them", () => {
    // $2 and $4 per million tokens.
    const plain = resolved([priced("plain", { prompt: "0.000002", completion: "0.000004" })]);
    const dropped = (max_price: NonNullable<ProviderPreferences["max_price"]>) => orderCandidates(plain, { ...base, preferences: { max_price } }).dropped;
    expect(dropped({ prompt: "2", completion: "4" })).toEqual([]);
    expect(dropped({ prompt: "1.99" })).toEqual(["plain: prompt price above provider.max_price"]);
    expect(dropped({ completion: "3.5" })).toEqual(["plain: completion price above provider.max_price"]);
  });
});

describe("prices of the tier a request is charged at", () => {
  const tiered = resolved([endpoint("alpha", "0.000001"), endpoint("beta", "0.000002")]);
  const priority: Record<string, Record<string, string>> = { alpha: { prompt: "0.00001", completion: "0.00001" }, beta: { prompt: "0.000003", completion: "0.000003" } };
  const pricingOf = (e: ResolvedEndpoint) => priority[e.provider] ?? e.pricing;

  it("sorts by price and applies provider.max_price at the prices pricingOf gives", () => {
    expect(providers(orderCandidates(tiered, { ...base, preferences: { sort: "price" }, pricingOf }))).toEqual(["beta", "alpha"]);
    const capped = orderCandidates(tiered, { ...base, preferences: { order: ["alpha", "beta"], max_price: { prompt: "5" } }, pricingOf });
    expect(providers(capped)).toEqual(["beta"]);
    expect(capped.dropped).toEqual(["alpha: prompt price above provider.max_price"]);
    expect(providers(orderCandidates(tiered, { ...base, preferences: { sort: "price" } }))).toEqual(["alpha", "beta"]);
  });
});

describe("provider names in order, only and ignore", () => {
  const named = { ...resolved([endpoint("alpha", "0.000001"), endpoint("amazon-bedrock", "0.000002")]), providers: [{ slug: "alpha", name: "Alpha" }, { slug: "amazon-bedrock", name: "Amazon Bedrock" }, { slug: "idle", name: "Idle" }] };

  it("matches slugs and display names whatever their case and spaces", () => {
    expect(providers(orderCandidates(named, { ...base, preferences: { ignore: ["Amazon Bedrock"] } }))).toEqual(["alpha"]);
    expect(providers(orderCandidates(named, { ...base, preferences: { only: [" AMAZON-BEDROCK "] } }))).toEqual(["amazon-bedrock"]);
    expect(providers(orderCandidates(named, { ...base, preferences: { order: ["amazon bedrock", "ALPHA"] } }))).toEqual(["amazon-bedrock", "alpha"]);
  });

  it("refuses an entry that names no provider of the catalog, naming where it is", () => {
    expect(() => orderCandidates(named, { ...base, preferences: { ignore: ["alpha", "Bedrock"] } })).toThrow(/provider\.ignore\[1\]: "Bedrock" names no provider/);
    expect(() => orderCandidates(named, { ...base, preferences: { order: ["nobody"] } })).toThrow(/provider\.order\[0\]/);
    expect(() => orderCandidates(named, { ...base, preferences: { only: ["nobody"] } })).toThrow(/provider\.only\[0\]/);
  });

  it("says why provider.order without fallbacks left each endpoint out", () => {
    const ordered = orderCandidates(named, { ...base, preferences: { order: ["idle"], allow_fallbacks: false } });
    expect(ordered.candidates).toEqual([]);
    expect([...ordered.dropped].sort()).toEqual(["alpha: not in provider.order (provider.allow_fallbacks is false)", "amazon-bedrock: not in provider.order (provider.allow_fallbacks is false)"]);
  });
});
