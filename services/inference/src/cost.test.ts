import { describe, expect, it } from "vitest";
import { picoToDecimal, picoToUsd, toPico } from "@switchyard/runtime";
import { costOf, estimateTokens } from "./cost.js";

describe("cost", () => {
  it("parses decimal prices exactly", () => {
    expect(toPico("0.00000015")).toBe(150_000n);
    expect(toPico("1")).toBe(1_000_000_000_000n);
    expect(toPico(undefined)).toBe(0n);
    expect(() => toPico("abc")).toThrow();
    expect(() => toPico("0.0000000000001")).toThrow();
  });

  it("sums token costs without floating-point drift", () => {
    const pricing = { prompt: "0.0000001", completion: "0.0000002", request: "0.001" };
    const cost = costOf(pricing, { prompt: 3, completion: 7 });
    expect(picoToDecimal(cost.total)).toBe("0.0010017");
    expect(picoToUsd(cost.prompt)).toBe(0.0000003);
    // 0.1 + 0.2 style sums stay exact over many requests.
    let total = 0n;
    for (let i = 0; i < 1000; i++) total += costOf({ prompt: "0.0000001", completion: "0.0000002" }, { prompt: 1, completion: 1 }).total;
    expect(picoToDecimal(total)).toBe("0.0003");
  });

  it("charges cached and reasoning tokens at their own prices when the endpoint has them", () => {
    const cost = costOf(
      { prompt: "0.000001", completion: "0.000002", input_cache_read: "0.0000001", internal_reasoning: "0.000003" },
      { prompt: 100, completion: 10, cachedPrompt: 60, reasoning: 4 },
    );
    expect(picoToDecimal(cost.prompt)).toBe("0.000046"); // 40 × 1e-6 + 60 × 1e-7
    expect(picoToDecimal(cost.completion)).toBe("0.000024"); // 6 × 2e-6 + 4 × 3e-6
  });

  it("charges cache writes at the write price, and at the prompt price when the endpoint has none", () => {
    const tokens = { prompt: 100, completion: 0, cachedPrompt: 50, cacheWritePrompt: 30 };
    const priced = costOf({ prompt: "0.000001", completion: "0", input_cache_read: "0.0000001", input_cache_write: "0.00000125" }, tokens);
    expect(picoToDecimal(priced.prompt)).toBe("0.0000625"); // 20 × 1e-6 + 50 × 1e-7 + 30 × 1.25e-6
    const plain = costOf({ prompt: "0.000001", completion: "0", input_cache_read: "0.0000001" }, tokens);
    expect(picoToDecimal(plain.prompt)).toBe("0.000055"); // 50 × 1e-6 + 50 × 1e-7
  });

  it("charges hour-long cache writes at their own price, and at the write price when the endpoint has none", () => {
    const tokens = { prompt: 100, completion: 0, cacheWritePrompt: 30, cacheWrite1hPrompt: 10 };
    const pricing = { prompt: "0.000001", completion: "0", input_cache_write: "0.00000125" };
    const priced = costOf({ ...pricing, input_cache_write_1h: "0.000002" }, tokens);
    expect(picoToDecimal(priced.prompt)).toBe("0.000115"); // 70 × 1e-6 + 20 × 1.25e-6 + 10 × 2e-6
    expect(picoToDecimal(costOf(pricing, tokens).prompt)).toBe("0.0001075"); // 70 × 1e-6 + 30 × 1.25e-6
  });

  it("charges audio tokens at the audio prices when the endpoint has them, else at the prompt's and the completion's", () => {
    const tokens = { prompt: 340, completion: 45, audioPrompt: 320, audioCompletion: 40 };
    const priced = costOf({ prompt: "0.000001", completion: "0.000002", audio: "0.000005", audio_output: "0.000008" }, tokens);
    expect(picoToDecimal(priced.prompt)).toBe("0.00162"); // 20 × 1e-6 + 320 × 5e-6
    expect(picoToDecimal(priced.completion)).toBe("0.00033"); // 5 × 2e-6 + 40 × 8e-6
    const plain = costOf({ prompt: "0.000001", completion: "0.000002" }, tokens);
    expect(picoToDecimal(plain.prompt)).toBe("0.00034");
    expect(picoToDecimal(plain.completion)).toBe("0.00009");
  });

  it("counts audio tokens as a share of what cache and reasoning leave, never more", () => {
    const pricing = { prompt: "0.000001", completion: "0.000002", input_cache_read: "0.0000001", audio: "0.000005", audio_output: "0.000008", internal_reasoning: "0.000003" };
    const cost = costOf(pricing, { prompt: 100, completion: 10, cachedPrompt: 60, audioPrompt: 1000, reasoning: 4, audioCompletion: 1000 });
    expect(picoToDecimal(cost.prompt)).toBe("0.000206"); // 60 × 1e-7 + 40 × 5e-6
    expect(picoToDecimal(cost.completion)).toBe("0.00006"); // 4 × 3e-6 + 6 × 8e-6
    expect(costOf(pricing, { prompt: 10, completion: 0, audioPrompt: -5 }).prompt).toBe(10_000_000n);
  });

  it("prices a negative or fractional count as none or the next whole one, never below zero", () => {
    const pricing = { prompt: "0.000001", completion: "0.000002", input_cache_read: "0.0000001", input_cache_write: "0.00001", internal_reasoning: "0.00001" };
    const negative = costOf(pricing, { prompt: 10, completion: 7, cachedPrompt: -100000, cacheWritePrompt: -100000, cacheWrite1hPrompt: -5, reasoning: -100000 });
    expect(picoToDecimal(negative.total)).toBe("0.000024"); // 10 × 1e-6 + 7 × 2e-6
    expect(costOf(pricing, { prompt: -10, completion: -7 }).total).toBe(0n);
    expect(picoToDecimal(costOf(pricing, { prompt: 9.2, completion: 6.5 }).total)).toBe("0.000024");
  });

  it("estimates tokens when a provider sends no usage, never zero for real text", () => {
    expect(estimateTokens("")).toBe(0);
    expect(estimateTokens("hi")).toBe(1);
    expect(estimateTokens("x".repeat(41))).toBe(11);
  });
});
