import type { ResolvedEndpoint, ResolvedModel } from "@switchyard/contracts";
import { describe, expect, it } from "vitest";
import { orderCandidates } from "./candidates.js";

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
