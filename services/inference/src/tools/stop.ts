import type { StopCondition } from "@switchyard/contracts";

/** Where the loop stands after a turn. */
export interface LoopState {
  steps: number;
  costPico: bigint;
  tokens: number;
  /** Function names and server tool types the model called in the last turn. */
  calledTools: string[];
  finishReason: string | null;
  nativeFinishReason: string | null;
}

/**
 * Dollars to picodollars without floating error: a threshold has at most 12 decimals that matter. The request
 * schema bounds it at $1,000,000,000; an amount whose picodollars overflow a number (undefined here) is one
 * no spend reaches, not an error halfway through a loop whose turns are already charged.
 */
function picodollars(dollars: number): bigint | undefined {
  const pico = Math.round(dollars * 1e12);
  return Number.isFinite(pico) ? BigInt(pico) : undefined;
}

/**
 * The first condition that holds (any one halts the loop), described for the logs, or undefined.
 * Thresholds are reached at equality, as in `@openrouter/sdk`'s own stop conditions (`>=`), so a loop
 * driven by the SDK and one run here stop after the same turn.
 */
export function firedCondition(conditions: readonly StopCondition[], state: LoopState): string | undefined {
  for (const condition of conditions) {
    switch (condition.type) {
      case "step_count_is":
        if (state.steps >= condition.step_count) return `step_count_is ${condition.step_count}`;
        break;
      case "max_cost": {
        const threshold = picodollars(condition.max_cost_in_dollars);
        if (threshold !== undefined && state.costPico >= threshold) return `max_cost ${condition.max_cost_in_dollars}`;
        break;
      }
      case "max_tokens_used":
        if (state.tokens >= condition.max_tokens) return `max_tokens_used ${condition.max_tokens}`;
        break;
      case "has_tool_call":
        if (state.calledTools.includes(condition.tool_name)) return `has_tool_call ${condition.tool_name}`;
        break;
      case "finish_reason_is":
        if (condition.reason === state.finishReason || condition.reason === state.nativeFinishReason) return `finish_reason_is ${condition.reason}`;
        break;
    }
  }
  return undefined;
}
