import { Gauge } from "prom-client";
import { describe, expect, it } from "vitest";
import { metrics, observeGeneration, registry, type GenerationFigures } from "./metrics.js";

/** prom-client's default process and Node.js figures, which are the process's and carry no `service`. */
const processDefault = (name: string) => name.startsWith("switchyard_process_") || name.startsWith("switchyard_nodejs_");

const figures = (model: string, overrides: Partial<GenerationFigures> = {}): GenerationFigures => ({
  service: "unit",
  operation: "chat",
  provider: "p",
  model,
  status: "completed",
  seconds: 1.2,
  firstOutputSeconds: 0.3,
  promptTokens: 10,
  completionTokens: 7,
  cachedTokens: 4,
  reasoningTokens: 3,
  costUsd: 0.25,
  byok: false,
  ...overrides,
});

const valuesOf = async (metric: { get(): Promise<{ values: Array<{ labels: Partial<Record<string, string | number>>; value: number; metricName?: string }> }> }, model: string) =>
  (await metric.get()).values.filter((v) => v.labels.model === model);

describe("metrics", () => {
  it("declares a service label on every series of ours, and names no gauge like a counter", () => {
    for (const [name, metric] of Object.entries(metrics)) {
      // prom-client keeps the declared label names on the instance; its typings do not show them.
      const { labelNames } = metric as unknown as { labelNames: readonly string[] };
      expect(labelNames, name).toContain("service");
    }
    const ours = registry.getMetricsAsArray().filter((m) => !processDefault(m.name));
    expect(ours.length).toBe(Object.keys(metrics).length);
    expect(ours.filter((m) => m instanceof Gauge && m.name.endsWith("_total")).map((m) => m.name)).toEqual([]);
  });

  it("counts a generation's tokens by kind, its cost and status, and times it", async () => {
    observeGeneration(figures("unit/a"));
    observeGeneration(figures("unit/a", { firstOutputSeconds: null, byok: true, reasoningTokens: 0 }));
    const tokens = await valuesOf(metrics.generationTokens, "unit/a");
    expect(Object.fromEntries(tokens.map((v) => [v.labels.kind, v.value]))).toEqual({ prompt: 20, completion: 14, cached: 8, reasoning: 3 });
    const cost = await valuesOf(metrics.generationCost, "unit/a");
    expect(Object.fromEntries(cost.map((v) => [v.labels.byok, v.value]))).toEqual({ false: 0.25, true: 0.25 });
    expect((await valuesOf(metrics.generations, "unit/a")).map((v) => [v.labels.status, v.value])).toEqual([["completed", 2]]);
    const count = async (metric: typeof metrics.generationDuration) =>
      (await valuesOf(metric, "unit/a")).find((v) => v.metricName?.endsWith("_count"))?.value;
    expect(await count(metrics.generationDuration)).toBe(2);
    expect(await count(metrics.generationFirstToken)).toBe(1);
  });

  it("times only completed generations, and skips figures a counter would refuse instead of throwing", async () => {
    observeGeneration(figures("unit/b", { status: "cancelled", promptTokens: -1, completionTokens: Number.NaN, costUsd: Number.POSITIVE_INFINITY }));
    expect((await valuesOf(metrics.generations, "unit/b")).map((v) => [v.labels.status, v.value])).toEqual([["cancelled", 1]]);
    expect(await valuesOf(metrics.generationDuration, "unit/b")).toEqual([]);
    expect(await valuesOf(metrics.generationFirstToken, "unit/b")).toEqual([]);
    expect((await valuesOf(metrics.generationTokens, "unit/b")).map((v) => v.labels.kind)).toEqual(["cached", "reasoning"]);
    expect(await valuesOf(metrics.generationCost, "unit/b")).toEqual([]);
  });
});
