import type { ResolvedEndpoint } from "@switchyard/contracts";
import { describe, expect, it } from "vitest";
import { chargedPricing } from "./pricing.js";
import { possiblePricings } from "./service-tier.js";

const standard = { prompt: "0.00000125", completion: "0.00001", input_cache_read: "0.000000125" };
const long = { prompt: "0.0000025", completion: "0.000015", input_cache_read: "0.00000025" };
const priority = { prompt: "0.000004" };
const endpoint = (extra: Partial<ResolvedEndpoint> = {}) =>
  ({ pricing: standard, service_tiers: { priority }, long_context: { above_prompt_tokens: 200_000, pricing: long }, ...extra }) as ResolvedEndpoint;

describe("the prices a generation is charged", () => {
  it("uses the standard prices for a prompt at or below the threshold", () => {
    expect(chargedPricing(endpoint(), undefined, 200_000)).toEqual(standard);
    expect(chargedPricing(endpoint(), undefined, 0)).toEqual(standard);
  });

  it("uses the long-context prices for every token of a generation whose prompt is above it", () => {
    expect(chargedPricing(endpoint(), undefined, 200_001)).toEqual(long);
    // A key the long-context prices leave out keeps its standard price.
    const partial = endpoint({ long_context: { above_prompt_tokens: 100, pricing: { prompt: "0.000002" } } });
    expect(chargedPricing(partial, undefined, 101)).toEqual({ ...standard, prompt: "0.000002" });
  });

  it("applies a served tier's own prices over the long-context ones for the keys the tier sets", () => {
    expect(chargedPricing(endpoint(), "priority", 10)).toEqual({ ...standard, ...priority });
    expect(chargedPricing(endpoint(), "priority", 300_000)).toEqual({ ...long, ...priority });
  });

  it("leaves an endpoint without long-context prices at its standard ones", () => {
    expect(chargedPricing(endpoint({ long_context: undefined }), undefined, 900_000)).toEqual(standard);
  });
});

describe("the prices a hold covers", () => {
  it("holds the standard prices when the prompt's bound is at or below the threshold", () => {
    expect(possiblePricings(endpoint(), "default", 200_000)).toEqual([standard]);
  });

  it("holds the long-context prices beside the standard ones when the bound is above it", () => {
    expect(possiblePricings(endpoint(), "default", 200_001)).toEqual([standard, long]);
  });

  it("holds each tier a provider may choose unasked at both sides of the threshold", () => {
    expect(possiblePricings(endpoint(), undefined, 250_000)).toEqual([standard, long, { ...standard, ...priority }, { ...long, ...priority }]);
    expect(possiblePricings(endpoint(), "priority", 250_000)).toEqual([{ ...standard, ...priority }, { ...long, ...priority }]);
  });
});
