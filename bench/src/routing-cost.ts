import type { ProviderPreferences, ResolvedEndpoint, ResolvedModel } from "@switchyard/contracts";
import { migrate, openPglite, silentLogger } from "@switchyard/runtime";
import type { GoalCheck } from "./goals.js";
import { endpointStatsMigrations, orderCandidates, startEndpointStats, type FiguresOf } from "@switchyard/upstream";

/** What ordering one model's endpoints costs, with and without live figures, in µs of wall time per request. */
export interface RoutingCost {
  endpoints: number;
  /** Per request shape: the default order, a latency sort, a preferred latency. */
  with_figures_us: Record<string, number>;
  without_figures_us: Record<string, number>;
}

/** The most ordering on live figures may cost per request. */
export const routingCostLimitUs = 20;

/** The goal: every request shape orders its endpoints on live figures in under `routingCostLimitUs`. */
export function routingGoal(cost: RoutingCost): GoalCheck {
  const worst = Math.max(...Object.values(cost.with_figures_us));
  return { goal: `routing on live endpoint figures under ${routingCostLimitUs} µs per request`, measured: `${worst.toFixed(2)} µs (slowest request shape)`, met: worst < routingCostLimitUs };
}

const endpoint = (provider: string, price: string): ResolvedEndpoint => ({
  provider,
  adapter: "openai-compatible",
  base_url: "http://127.0.0.1:9/v1",
  upstream_model: "m",
  pricing: { prompt: price, completion: price },
  context_length: 128_000,
  max_completion_tokens: null,
  max_inputs: null,
  supported_parameters: ["temperature", "tools"],
  region: "us",
  zdr: false,
  data_policy: { training: false, retains_prompts: false, zdr: false, publishes_free_prompts: false },
  quantization: null,
  api_key_env: [],
  requires_api_key: false,
  operator_key: true,
  byok: null,
});

const shapes: Record<string, ProviderPreferences | undefined> = {
  default: undefined,
  "sort latency": { sort: "latency" },
  "preferred latency": { sort: "price", preferred_max_latency: { p50: 0.5, p90: 1 } },
};

function timeOrder(model: ResolvedModel, preferences: ProviderPreferences | undefined, figuresOf: FiguresOf | undefined, iterations: number): number {
  const options = { preferences, sessionId: undefined, requestedParameters: [], coolingDown: () => false, figuresOf };
  for (let i = 0; i < 2000; i++) orderCandidates(model, options);
  const started = performance.now();
  for (let i = 0; i < iterations; i++) orderCandidates(model, options);
  return ((performance.now() - started) * 1000) / iterations;
}

/**
 * Orders a model of six endpoints many times through `orderCandidates`, reading figures from a live
 * `startEndpointStats` (on embedded PGlite, filled with a few minutes of measured traffic) as inference does.
 */
export async function measureRoutingCost(iterations = 50_000): Promise<RoutingCost> {
  const db = await openPglite();
  try {
    await migrate(db, "bench_stats", endpointStatsMigrations("bench_stats"));
    const stats = startEndpointStats({ db, schema: "bench_stats", logger: silentLogger(), bucketMs: 60_000, intervalMs: 3_600_000 });
    const providers = ["p1", "p2", "p3", "p4", "p5", "p6"];
    for (const [i, provider] of providers.entries()) {
      for (let n = 0; n < 200; n++) {
        stats.attempted(provider, "bench/m", n % (10 + i) !== 0);
        stats.served(provider, "bench/m", { firstOutputMs: 100 * (i + 1) + (n % 50), throughput: 200 / (i + 1) + (n % 20) });
      }
    }
    await stats.refresh();
    const model: ResolvedModel = {
      requested: "bench/m",
      model: "bench/m",
      variant: null,
      sort: null,
      input_modalities: ["text"],
      output_modalities: ["text"],
      distillable: true,
      preset: null,
      endpoints: providers.map((p, i) => endpoint(p, `0.00000${i + 1}`)),
      excluded: [],
      guardrail_ids: [],
      content_filters: [],
      disabled_server_tools: [],
      broadcast: false,
      io_logging: null,
      response_cache_disabled: false,
    };
    const cost: RoutingCost = { endpoints: providers.length, with_figures_us: {}, without_figures_us: {} };
    for (const [name, preferences] of Object.entries(shapes)) {
      cost.with_figures_us[name] = timeOrder(model, preferences, stats.figures, iterations);
      cost.without_figures_us[name] = timeOrder(model, preferences, undefined, iterations);
    }
    await stats.stop();
    return cost;
  } finally {
    await db.close();
  }
}
