import { describe, expect, it } from "vitest";
import { presetNamed, withPresetDefaults, type ResolvedPreset } from "./presets.js";

const preset = (config: Record<string, unknown>, systemPrompt = ""): ResolvedPreset => ({ id: "p1", slug: "fast", version: 1, system_prompt: systemPrompt, config });
const takes = ["model", "models", "provider", "input", "user"];

describe("presets on routes other than chat", () => {
  it("names the preset a model refers to", () => {
    expect(presetNamed({ model: "@preset/fast" })).toBe("@preset/fast");
    expect(presetNamed({ model: "openai/gpt-4o" })).toBeUndefined();
    expect(presetNamed({ models: ["@preset/fast"] })).toBeUndefined();
    expect(presetNamed(null)).toBeUndefined();
  });

  it("adds the config's fields the request leaves out, keeps the request's own, and leaves the model to resolution", () => {
    const body = withPresetDefaults(preset({ model: "emb/small", provider: { only: ["a"] }, user: "u1" }), { model: "@preset/fast", input: "x", user: "u2" }, takes, "/embeddings");
    expect(body).toEqual({ model: "@preset/fast", input: "x", provider: { only: ["a"] }, user: "u2" });
  });

  it("refuses a preset that sets what the route does not take, or a system prompt", () => {
    expect(() => withPresetDefaults(preset({ model: "m", temperature: 0.2, max_tokens: 9 }), { input: "x" }, takes, "/embeddings")).toThrow(
      "Invalid body: model: preset fast sets temperature, max_tokens, which /embeddings does not take",
    );
    expect(() => withPresetDefaults(preset({ model: "m" }, "Be brief."), { input: "x" }, takes, "/rerank")).toThrow("preset fast sets system_prompt, which /rerank does not take");
  });
});
