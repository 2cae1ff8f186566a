import { finishReasonIs, hasToolCall, maxCost, maxTokensUsed, stepCountIs } from "@openrouter/sdk/lib/stop-conditions.js";
import type { StopCondition } from "@switchyard/contracts";
import { describe, expect, it } from "vitest";
import { firedCondition, type LoopState } from "./stop.js";

/** `steps` turns of `tokens` tokens and `costPico` picodollars each, the last one calling `tool`. */
function loop(steps: number, tokens: number, costPico: bigint, tool = "datetime", finishReason = "tool_calls") {
  const state: LoopState = {
    steps,
    costPico: costPico * BigInt(steps),
    tokens: tokens * steps,
    calledTools: [tool, `openrouter:${tool}`],
    finishReason,
    nativeFinishReason: finishReason,
  };
  // The SDK's view of the same turns: one step per turn with its own usage.
  const sdkSteps = Array.from({ length: steps }, () => ({
    usage: { totalTokens: tokens, cost: Number(costPico) / 1e12 },
    toolCalls: [{ name: tool }],
    finishReason,
  }));
  return { state, sdk: { steps: sdkSteps } as never };
}

describe("stop conditions", () => {
  // Each case sits on a threshold, one below it, or one past it; the gateway must agree with the SDK.
  const cases: Array<[string, StopCondition, (sdk: never) => boolean | Promise<boolean>, number, number, bigint]> = [
    ["step_count_is at the count", { type: "step_count_is", step_count: 3 }, stepCountIs(3), 3, 10, 1n],
    ["step_count_is below the count", { type: "step_count_is", step_count: 3 }, stepCountIs(3), 2, 10, 1n],
    ["max_tokens_used at the threshold", { type: "max_tokens_used", max_tokens: 30 }, maxTokensUsed(30), 2, 15, 1n],
    ["max_tokens_used one below", { type: "max_tokens_used", max_tokens: 31 }, maxTokensUsed(31), 2, 15, 1n],
    ["max_tokens_used past it", { type: "max_tokens_used", max_tokens: 29 }, maxTokensUsed(29), 2, 15, 1n],
    ["max_cost at the threshold", { type: "max_cost", max_cost_in_dollars: 0.00004 }, maxCost(0.00004), 2, 15, 20_000_000n],
    ["max_cost one picodollar below", { type: "max_cost", max_cost_in_dollars: 0.000040000001 }, maxCost(0.000040000001), 2, 15, 20_000_000n],
    ["max_cost past it", { type: "max_cost", max_cost_in_dollars: 0.00003 }, maxCost(0.00003), 2, 15, 20_000_000n],
    ["has_tool_call of the called tool", { type: "has_tool_call", tool_name: "datetime" }, hasToolCall("datetime"), 1, 15, 1n],
    ["has_tool_call of another tool", { type: "has_tool_call", tool_name: "web_search" }, hasToolCall("web_search"), 1, 15, 1n],
  ];

  it.each(cases)("%s fires exactly when the SDK's condition does", async (_name, condition, sdkCondition, steps, tokens, costPico) => {
    const { state, sdk } = loop(steps, tokens, costPico);
    const sdkStops = await sdkCondition(sdk);
    expect(firedCondition([condition], state) !== undefined).toBe(sdkStops);
  });

  it("fires at equality for every threshold", () => {
    const { state } = loop(2, 15, 20_000_000n);
    expect(firedCondition([{ type: "step_count_is", step_count: 2 }], state)).toBe("step_count_is 2");
    expect(firedCondition([{ type: "max_tokens_used", max_tokens: 30 }], state)).toBe("max_tokens_used 30");
    expect(firedCondition([{ type: "max_cost", max_cost_in_dollars: 0.00004 }], state)).toBe("max_cost 0.00004");
  });

  it("matches a finish reason by its normalized or native name, like the SDK", async () => {
    const { state, sdk } = loop(1, 15, 1n, "datetime", "tool_calls");
    expect(firedCondition([{ type: "finish_reason_is", reason: "tool_calls" }], state)).toBe("finish_reason_is tool_calls");
    expect(await finishReasonIs("tool_calls")(sdk)).toBe(true);
    expect(firedCondition([{ type: "finish_reason_is", reason: "tool_use" }], { ...state, nativeFinishReason: "tool_use" })).toBe("finish_reason_is tool_use");
    expect(firedCondition([{ type: "finish_reason_is", reason: "length" }], state)).toBeUndefined();
  });

  it("takes a server tool by its type as well as by its function name", () => {
    const { state } = loop(1, 15, 1n);
    expect(firedCondition([{ type: "has_tool_call", tool_name: "openrouter:datetime" }], state)).toBe("has_tool_call openrouter:datetime");
  });

  it("never throws on a max_cost too large to count in picodollars, and never fires on it", () => {
    const { state } = loop(30, 15, 10n ** 21n);
    expect(firedCondition([{ type: "max_cost", max_cost_in_dollars: 1e300 }], state)).toBeUndefined();
    expect(firedCondition([{ type: "max_cost", max_cost_in_dollars: Number.MAX_VALUE }], state)).toBeUndefined();
    expect(firedCondition([{ type: "max_cost", max_cost_in_dollars: 1e9 }], state)).toBe("max_cost 1000000000");
  });

  it("halts on any one of several conditions", () => {
    const { state } = loop(1, 15, 1n);
    expect(firedCondition([{ type: "step_count_is", step_count: 9 }, { type: "max_tokens_used", max_tokens: 15 }], state)).toBe("max_tokens_used 15");
  });
});
