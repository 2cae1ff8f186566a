import { metrics, silentLogger } from "@switchyard/runtime";
import { describe, expect, it, vi } from "vitest";
import { capCharge, type ChargeInput } from "./charge.js";

const input = (overrides: Partial<ChargeInput>): ChargeInput => ({
  logger: silentLogger().child({ service: "unit" }),
  generationId: "gen-1",
  provider: "alpha",
  model: "unit/model",
  held: 1_000_000_000n,
  reported: 500_000_000n,
  beyondHold: false,
  usage: { completionTokens: 50 },
  ...overrides,
});

const overruns = async (model: string, charged: string) =>
  (await metrics.spendOverruns.get()).values.find((v) => v.labels.model === model && v.labels.charged === charged)?.value ?? 0;

describe("capCharge", () => {
  it("charges what was reported when it is within the hold, the hold itself included", () => {
    expect(capCharge(input({ model: "unit/within" }))).toEqual({ charged: 500_000_000n, reported: 500_000_000n });
    expect(capCharge(input({ model: "unit/within", reported: 1_000_000_000n }))).toEqual({ charged: 1_000_000_000n, reported: 1_000_000_000n });
  });

  it("charges the held amount when more was reported, warns with both figures and counts the overrun", async () => {
    const logger = silentLogger().child({ service: "unit" });
    const warn = vi.spyOn(logger, "warn");
    const charge = capCharge(input({ logger, model: "unit/over", reported: 20_000_000_000n }));
    expect(charge).toEqual({ charged: 1_000_000_000n, reported: 20_000_000_000n });
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0]![0]).toMatchObject({ provider: "alpha", model: "unit/over", heldUsd: "0.001", reportedUsd: "0.02", chargedUsd: "0.001" });
    expect(await overruns("unit/over", "held")).toBe(1);
    const figures = (await metrics.spendOverrunUsd.get()).values.filter((v) => v.labels.model === "unit/over");
    expect(Object.fromEntries(figures.map((v) => [v.labels.figure, v.value]))).toEqual({ held: 0.001, reported: 0.02 });
  });

  it("charges what was reported past the hold when the operator allows it, and still counts it", async () => {
    expect(capCharge(input({ model: "unit/beyond", reported: 20_000_000_000n, beyondHold: true }))).toEqual({ charged: 20_000_000_000n, reported: 20_000_000_000n });
    expect(await overruns("unit/beyond", "reported")).toBe(1);
    expect(await overruns("unit/beyond", "held")).toBe(0);
  });

  it("has no ceiling when nothing was held", () => {
    expect(capCharge(input({ model: "unit/unheld", held: undefined, reported: 20_000_000_000n }))).toEqual({ charged: 20_000_000_000n, reported: 20_000_000_000n });
  });

  it("never charges below zero: a negative figure is charged and reported as zero, and logged at error", () => {
    const logger = silentLogger().child({ service: "unit" });
    const error = vi.spyOn(logger, "error");
    expect(capCharge(input({ logger, model: "unit/negative", reported: -899_976_000_000n }))).toEqual({ charged: 0n, reported: 0n });
    expect(capCharge(input({ logger, model: "unit/negative", held: undefined, reported: -1n }))).toEqual({ charged: 0n, reported: 0n });
    expect(error).toHaveBeenCalledTimes(2);
    expect(error.mock.calls[0]![0]).toMatchObject({ generationId: "gen-1", provider: "alpha", model: "unit/negative", reportedUsd: "-0.899976" });
  });
});
