import { HttpError, picoToDecimal, picoToUsd, toPico } from "@switchyard/runtime";
import { limitOwner, requestHold, type HoldContext } from "@switchyard/upstream";

export type { HoldContext, SpendHolds } from "@switchyard/upstream";

/**
 * Holds the most this attempt can cost before its provider is called. Refused: 403 `Key limit exceeded`
 * when the key's settled spend has reached its limit, else 402 with what it could cost and what is left.
 */
export async function reserveMedia(context: HoldContext, worstCase: bigint, isByok: boolean): Promise<void> {
  const refused = await requestHold(context, worstCase, isByok);
  if (!refused) return;
  const remaining = toPico(refused.remaining_usd);
  throw new HttpError(
    "payment_required",
    `This request requires more credits: it can cost up to $${picoToDecimal(worstCase)}, but only $${picoToDecimal(remaining)} remains. ${limitOwner(refused)}`,
    { limited_by: refused.limited_by, guardrail_id: refused.guardrail_id, remaining_usd: picoToUsd(remaining), requested_usd: picoToUsd(worstCase) },
  );
}
