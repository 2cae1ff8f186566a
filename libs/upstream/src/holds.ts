import type { HoldDecision, HoldRequest } from "@switchyard/contracts";
import { HttpError, picoToDecimal, picoToUsd, toPico } from "@switchyard/runtime";

/** Identity's spend holds: in-process in standalone, over HTTP otherwise. */
export interface SpendHolds {
  hold(request: HoldRequest): Promise<HoldDecision>;
  release(generationId: string): Promise<boolean>;
}

/** Identity's side of holds, with the leases of the replicas that own them (see `leasedHolds`). */
export interface IdentityHolds extends SpendHolds {
  renew(owner: string, leaseMs: number): Promise<number>;
  releaseOwner(owner: string): Promise<number>;
  detach(owner: string): Promise<number>;
}

export interface HoldContext {
  holds: SpendHolds;
  generationId: string;
  keyHash: string;
  /** How long an unsettled hold lives: the request deadline plus time for its completion event. */
  ttlMs: number;
}

/** How long after a hold call that got no answer its hold is released once more, when the first release found none. */
export const lateReleaseMs = 30_000;

/**
 * A hold call that timed out, lost its connection or got a 5xx may have written the hold all the same (identity
 * answered too late, or its database dropped the connection after the COMMIT), and nothing else would release
 * it: the generation ends here, and the lease of this replica's holds keeps it counting until its deadline.
 * Released now by generation id; identity may still be writing it when that release arrives and finds none, so
 * it is released once more a little later. Not awaited: the caller's 503 does not wait for identity.
 */
function releaseUnanswered(context: HoldContext): void {
  const release = () => context.holds.release(context.generationId).catch(() => false);
  void release().then((released) => {
    if (released) return;
    setTimeout(() => void release(), lateReleaseMs).unref();
  });
}

/**
 * Asks identity to hold `amount` picodollars for the generation. A key or guardrail budget whose settled
 * spend has reached its limit is refused with 403 here; other refusals come back for the caller to explain. A
 * call that got no answer is a 503, and whatever hold it may have left is released.
 */
export async function requestHold(context: HoldContext, amount: bigint, isByok = false): Promise<HoldDecision & { granted: false } | undefined> {
  let decision: HoldDecision;
  try {
    decision = await context.holds.hold({
      generation_id: context.generationId,
      key_hash: context.keyHash,
      amount_usd: picoToDecimal(amount),
      is_byok: isByok,
      ttl_ms: context.ttlMs,
    });
  } catch (error) {
    // Identity refused the request it read (400, 403, 409): it wrote no hold.
    if (error instanceof HttpError) throw error;
    releaseUnanswered(context);
    // No provider is called on credit that could not be checked.
    throw Object.assign(new HttpError("unavailable", "Spend limits cannot be checked right now; try again shortly"), { cause: error });
  }
  // Identity counts holds (switchyard_spend_holds_total), where they are granted, settled, released and expire.
  if (decision.granted) return undefined;
  // A used-up key limit or guardrail budget refuses every request until it resets (403), as OpenRouter's do;
  // credits that are not enough for this request's worst case are a 402.
  if (decision.limited_by === "key" && decision.exhausted) throw new HttpError("forbidden", "Key limit exceeded");
  if (decision.limited_by === "guardrail" && decision.exhausted) {
    throw new HttpError("forbidden", `Guardrail budget exceeded: the budget of guardrail ${decision.guardrail_id} is used up until it resets`, { guardrail_id: decision.guardrail_id });
  }
  return decision;
}

/** The sentence that says whose limit refused a hold. */
export const limitOwner = (decision: HoldDecision & { granted: false }): string =>
  decision.limited_by === "key"
    ? "To increase, raise this key's limit or wait for it to reset."
    : decision.limited_by === "organization"
      ? "The organization's credits limit it; the operator can raise them (PUT /api/v1/credits)."
      : `The budget of guardrail ${decision.guardrail_id} limits it; raise its limit_usd or wait for it to reset.`;

/**
 * Holds `worstCase` picodollars, the most this attempt can cost, before its provider is called. Refused:
 * 403 `Key limit exceeded` when the key's settled spend has reached its limit, else 402 with what it could
 * cost and what is left. For requests whose cost is not a count of completion tokens (media, embeddings, rerank).
 */
export async function holdAmount(context: HoldContext, worstCase: bigint, isByok: boolean): Promise<void> {
  const refused = await requestHold(context, worstCase, isByok);
  if (refused) throw costRefusal(worstCase, refused);
}

/** The 402 of a refused hold in dollars: what the request can cost, and what is left. */
export function costRefusal(worstCase: bigint, refused: HoldDecision & { granted: false }, extra: Record<string, unknown> = {}): HttpError {
  const remaining = toPico(refused.remaining_usd);
  return new HttpError(
    "payment_required",
    `This request requires more credits: it can cost up to $${picoToDecimal(worstCase)}, but only $${picoToDecimal(remaining)} remains. ${limitOwner(refused)}`,
    { limited_by: refused.limited_by, guardrail_id: refused.guardrail_id, remaining_usd: picoToUsd(remaining), requested_usd: picoToUsd(worstCase), ...extra },
  );
}
