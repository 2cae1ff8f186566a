import { releaseHold, type Candidate } from "@switchyard/upstream";
import type { InferenceDeps } from "../deps.js";
import { reserve } from "../spend/holds.js";

/**
 * The spend hold of one generation, and the only code that touches it. Its states:
 *
 *   open ──reserve──► held ──settle───► settled    the generation is recorded; its event settles the hold
 *                      │  ╲──release──► released   no endpoint accepted: nothing was used
 *                      │   ╲─abandon──► settled    the client left while a provider read the request:
 *                      │                           recorded as cancelled, at the estimated prompt
 *                      └─reserve (a fallback endpoint) replaces the amount with its own worst case
 *
 * A reserve whose call got no answer (503) releases whatever it may have written itself (`requestHold`), as
 * it never reached `held`. A hold that is never settled or released (the process died) expires after `holdTtlMs`.
 */
export class SpendHold {
  private state: "open" | "held" | "settled" | "released" = "open";
  private readonly amounts = new Map<Candidate, bigint>();
  /** The endpoint whose request is under way; none between attempts. */
  private current: Candidate | undefined;

  constructor(
    private readonly deps: InferenceDeps,
    private readonly generationId: string,
    private readonly keyHash: string,
  ) {}

  /** Holds the worst case of an attempt on `candidate` (402/403 when the key or a guardrail budget cannot pay it). */
  async reserve(candidate: Candidate, body: Record<string, unknown>): Promise<void> {
    const context = { holds: this.deps.holds, generationId: this.generationId, keyHash: this.keyHash, ttlMs: this.deps.holdTtlMs };
    this.amounts.set(candidate, await reserve(context, candidate.endpoint, body, candidate.byokKey !== undefined));
    this.state = "held";
    this.current = candidate;
  }

  /** The attempt on `candidate` failed while its client was there: the request under way is no longer its. */
  attemptFailed(candidate: Candidate): void {
    if (this.current === candidate) this.current = undefined;
  }

  /** The generation is recorded for `candidate`: its charge may be at most what was held for it. */
  settle(candidate: Candidate): bigint | undefined {
    this.state = "settled";
    return this.amounts.get(candidate);
  }

  /** No endpoint accepted: the hold goes back, unless a provider was reading the request when the client left. */
  async release(): Promise<void> {
    if (this.state !== "held") return;
    this.state = "released";
    await releaseHold({ holds: this.deps.holds, generationId: this.generationId }, this.deps.logger);
  }

  /** The endpoint a client walked away from mid-request, whose attempt is charged rather than released. */
  abandonedBy(signal: AbortSignal, timedOut: boolean): Candidate | undefined {
    return this.state === "held" && signal.aborted && !timedOut ? this.current : undefined;
  }
}
