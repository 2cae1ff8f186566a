import type { HoldDecision, HoldRequest, ResolvedEndpoint } from "@switchyard/contracts";
import { HttpError, picoToDecimal, toPico } from "@switchyard/runtime";
import { affordableTokens, worstCase } from "./worst-case.js";

/** Identity's spend holds: in-process in standalone, over HTTP otherwise. */
export interface SpendHolds {
  hold(request: HoldRequest): Promise<HoldDecision>;
  release(generationId: string): Promise<boolean>;
}

export interface HoldContext {
  holds: SpendHolds;
  generationId: string;
  keyHash: string;
  budgets: HoldRequest["budgets"];
  /** How long an unsettled hold lives: the request deadline plus time for its completion event. */
  ttlMs: number;
}

/**
 * Reserves the worst case of an attempt on `endpoint` before the provider is called. Refused: 403 `Key limit
 * exceeded` when the key's settled spend has reached its limit, else 402 with the tokens the rest can pay for.
 */
export async function reserve(context: HoldContext, endpoint: ResolvedEndpoint, body: Record<string, unknown>): Promise<void> {
  const worst = worstCase(endpoint, body);
  let decision: HoldDecision;
  try {
    decision = await context.holds.hold({
      generation_id: context.generationId,
      key_hash: context.keyHash,
      amount_usd: picoToDecimal(worst.amount),
      is_byok: false,
      budgets: context.budgets,
      ttl_ms: context.ttlMs,
    });
  } catch (error) {
    if (error instanceof HttpError) throw error;
    // No provider is called on credit that could not be checked.
    throw new HttpError("unavailable", "Spend limits cannot be checked right now; try again shortly");
  }
  if (decision.granted) return;
  if (decision.limited_by === "key" && decision.exhausted) throw new HttpError("forbidden", "Key limit exceeded");
  const affordable = affordableTokens(worst, toPico(decision.remaining_usd));
  const whose =
    decision.limited_by === "key"
      ? "To increase, raise this key's limit or wait for it to reset."
      : `The budget of guardrail ${decision.guardrail_id} limits it; raise its limit_usd or wait for it to reset.`;
  throw new HttpError(
    "payment_required",
    `This request requires more credits, or fewer max_tokens. You requested up to ${worst.completionTokens} tokens, but can only afford ${affordable}. ${whose}`,
    { limited_by: decision.limited_by, guardrail_id: decision.guardrail_id, remaining_usd: Number(decision.remaining_usd), requested_tokens: worst.completionTokens, affordable_tokens: affordable },
  );
}
