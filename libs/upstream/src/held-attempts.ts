import { HttpError, type Logger } from "@switchyard/runtime";
import type { AttemptSignal } from "./attempt-timeouts.js";
import { firstAccepting, type Attempt, type AttemptContext, type UpstreamTarget } from "./attempts.js";
import { UpstreamError } from "./errors.js";
import type { Candidate } from "./candidates.js";
import { upstreamFailure } from "./failure.js";
import { holdAmount, type HoldContext } from "./holds.js";

/** Gives a hold back now instead of letting it expire, as nothing will be charged; a failure is logged and the hold expires. */
export async function releaseHold(context: Pick<HoldContext, "holds" | "generationId">, logger: Logger): Promise<void> {
  await context.holds.release(context.generationId).catch((err: unknown) => logger.warn({ err, generationId: context.generationId }, "could not release a spend hold; it will expire"));
}

/**
 * Whether an attempt that threw did so because its client left while the provider worked on the request
 * (charged), rather than because the provider answered with an error or was never reached (no work to
 * charge for).
 */
export const leftWhileWorking = (error: unknown, request: AbortSignal): boolean => request.aborted && !(error instanceof UpstreamError && error.status !== null);

export interface HeldAttemptOptions {
  hold: HoldContext;
  /** The request's deadline passed (as opposed to its client leaving). */
  timedOut: () => boolean;
  /**
   * The client left while `candidate`'s provider worked on the request: that attempt is charged (at what the
   * caller estimates) instead of its hold being released. Without it, the hold is released.
   */
  abandoned?: (candidate: Candidate, held: bigint) => void;
}

/**
 * `firstAccepting` with a spend hold: each attempt holds its worst case (`holdAmount`: 402/403 when the key
 * or a guardrail budget cannot pay it) before its provider is called, and the answer says what the accepted
 * attempt held, the most it may be charged. When no endpoint accepts, the hold goes back and the caller
 * hears the most telling failure (402/403 from the hold, 429, 502, 524, 529).
 */
export async function firstAcceptingHeld<P, T>(
  providers: Readonly<Record<string, P>>,
  candidates: readonly Candidate[],
  context: AttemptContext,
  attempts: Attempt[],
  options: HeldAttemptOptions,
  worstCase: (candidate: Candidate) => bigint,
  call: (provider: P, target: UpstreamTarget, candidate: Candidate, attempt: AttemptSignal) => Promise<T>,
): Promise<{ result: T; candidate: Candidate; held: bigint }> {
  const held = new Map<Candidate, bigint>();
  let holding = false;
  /** The endpoint whose provider has the request now; none between attempts. */
  let working: Candidate | undefined;
  try {
    const accepted = await firstAccepting(providers, candidates, context, attempts, async (provider, target, candidate, attempt) => {
      const amount = worstCase(candidate);
      await holdAmount(options.hold, amount, candidate.byokKey !== undefined);
      held.set(candidate, amount);
      holding = true;
      working = candidate;
      try {
        return await call(provider, target, candidate, attempt);
      } catch (error) {
        if (!leftWhileWorking(error, context.signal)) working = undefined;
        throw error;
      }
    });
    return { result: accepted.result, candidate: accepted.candidate, held: held.get(accepted.candidate)! };
  } catch (error) {
    if (working && options.abandoned && context.signal.aborted && !options.timedOut()) options.abandoned(working, held.get(working)!);
    else if (holding) await releaseHold(options.hold, context.logger);
    throw error instanceof HttpError ? error : upstreamFailure(error, options.timedOut());
  }
}
