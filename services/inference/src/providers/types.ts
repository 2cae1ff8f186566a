import type { UpstreamTarget } from "@switchyard/upstream";
import type { Completion, PartBatch } from "../generation/parts.js";

export type { UpstreamUsage } from "../generation/parts.js";

export { UpstreamError, type UpstreamTarget } from "@switchyard/upstream";

/**
 * One wire format. Adapters take the gateway's upstream body (Chat Completions' shape, the one every dialect
 * is normalised to) and answer in typed parts; they know no dialect. OpenAI-compatible servers share one
 * implementation.
 */
export interface ChatProvider {
  complete(body: Record<string, unknown>, target: UpstreamTarget, signal: AbortSignal): Promise<Completion>;
  /**
   * What a chat body asks for that this adapter's wire request leaves out (a field its format has no place
   * for, a value it cannot take): named in the summary, refused under `provider.require_parameters`.
   */
  leftOut?(body: Record<string, unknown>): string[];
  /**
   * Fields of the request that every other wire leaves out (the gateway's own, see request-body.ts) and this
   * adapter's has a place for: its bodies carry them.
   */
  readonly reads?: readonly string[];
  /** Resolves once the provider has accepted the request (its headers arrived); throws before that. */
  stream(body: Record<string, unknown>, target: UpstreamTarget, signal: AbortSignal): Promise<AsyncIterable<PartBatch>>;
}
