import { describe, expect, it } from "vitest";
import { mediaCost } from "./cost.js";

const pico = (usd: string) => BigInt(Math.round(Number(usd) * 1e12));

describe("mediaCost", () => {
  it("prices seconds to the millisecond, rounding up", () => {
    expect(mediaCost({ audio_second: "0.0001" }, { seconds: 2.0001, promptTokens: 0, completionTokens: 0 })).toBe(pico("0.0002001"));
    expect(mediaCost({ audio_second: "0.0001" }, { seconds: 0, promptTokens: 0, completionTokens: 0 })).toBe(0n);
  });

  it("adds images, references, audio, prompt and completion tokens and the request price", () => {
    const pricing = { image_output: "0.04", image: "0.001", audio: "0.000006", prompt: "0.000001", completion: "0.00001", request: "0.0005" };
    const cost = mediaCost(pricing, { images: 2, references: 3, audioTokens: 100, promptTokens: 10, completionTokens: 20 });
    expect(cost).toBe(pico("0.08") + pico("0.003") + pico("0.0006") + pico("0.00001") + pico("0.0002") + pico("0.0005"));
  });

  it("prices speech by characters, or by text and audio output tokens", () => {
    expect(mediaCost({ character: "0.000015" }, { characters: 1000, promptTokens: 0, completionTokens: 0 })).toBe(pico("0.015"));
    const tokens = { prompt: "0.0000006", audio_output: "0.000012", request: "0.001" };
    expect(mediaCost(tokens, { audioOutputTokens: 500, promptTokens: 20, completionTokens: 0 })).toBe(pico("0.006") + pico("0.000012") + pico("0.001"));
  });

  it("prices audio tokens at the prompt price when the endpoint has no audio price", () => {
    expect(mediaCost({ prompt: "0.000002" }, { audioTokens: 5, promptTokens: 0, completionTokens: 0 })).toBe(pico("0.00001"));
  });
});
