import { describe, expect, it } from "vitest";
import { mergePreset } from "./request-context.js";

describe("mergePreset", () => {
  it("lets the request's fields win and keeps the preset's others", () => {
    expect(mergePreset({ temperature: 0.2, top_p: 0.5 }, { temperature: 1 })).toEqual({ temperature: 1, top_p: 0.5 });
  });

  it("merges the output limit aliases as one setting", () => {
    expect(mergePreset({ max_completion_tokens: 50, max_tokens: 60 }, { max_tokens: 500 })).toEqual({ max_tokens: 500 });
    expect(mergePreset({ max_tokens: 50 }, { max_completion_tokens: 500 })).toEqual({ max_completion_tokens: 500 });
    expect(mergePreset({ max_completion_tokens: 50 }, {})).toEqual({ max_completion_tokens: 50 });
  });

  it("merges the reasoning effort aliases as one setting, keeping the preset's other reasoning keys", () => {
    expect(mergePreset({ reasoning: { effort: "high", exclude: true } }, { reasoning_effort: "low" })).toEqual({ reasoning: { exclude: true }, reasoning_effort: "low" });
    expect(mergePreset({ reasoning: { effort: "high" } }, { reasoning_effort: "low" })).toEqual({ reasoning_effort: "low" });
    expect(mergePreset({ reasoning_effort: "high" }, { reasoning: { effort: "low" } })).toEqual({ reasoning: { effort: "low" } });
    expect(mergePreset({ reasoning: { effort: "high", exclude: true } }, { reasoning: { max_tokens: 10 } })).toEqual({ reasoning: { max_tokens: 10 } });
    expect(mergePreset({ reasoning_effort: "high" }, { temperature: 1 })).toEqual({ reasoning_effort: "high", temperature: 1 });
  });
});
