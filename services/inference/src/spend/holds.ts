import type { ResolvedEndpoint } from "@switchyard/contracts";
import { HttpError, toPico } from "@switchyard/runtime";
import { costRefusal, limitOwner, requestHold, type HoldContext } from "@switchyard/upstream";
import { affordableTokens, worstCase } from "./worst-case.js";

export type { HoldContext, SpendHolds } from "@switchyard/upstream";

/**
 * Reserves the worst case of an attempt on `endpoint` before the provider is called, and returns it: the most
 * the attempt may be charged. Refused: 403 `Key limit exceeded` when the key's settled spend has reached its
 * limit, else 402 with the tokens the rest can pay for; in dollars when completion tokens cost nothing (a
 * price per request), since fewer max_tokens would not help.
 */
export async function reserve(context: HoldContext, endpoint: ResolvedEndpoint, body: Record<string, unknown>, isByok: boolean): Promise<bigint> {
  const worst = worstCase(endpoint, body);
  const refused = await requestHold(context, worst.amount, isByok);
  if (!refused) return worst.amount;
  const affordable = affordableTokens(worst, toPico(refused.remaining_usd));
  if (worst.completionPrice === 0n) throw costRefusal(worst.amount, refused, { requested_tokens: worst.completionTokens, affordable_tokens: affordable });
  throw new HttpError(
    "payment_required",
    `This request requires more credits, or fewer max_tokens. You requested up to ${worst.completionTokens} tokens, but can only afford ${affordable}. ${limitOwner(refused)}`,
    { limited_by: refused.limited_by, guardrail_id: refused.guardrail_id, remaining_usd: Number(refused.remaining_usd), requested_tokens: worst.completionTokens, affordable_tokens: affordable },
  );
}
