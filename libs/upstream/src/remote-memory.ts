import type { ResolvedModel, ResolveRequest } from "@switchyard/contracts";
import type { Bus } from "@switchyard/runtime";
import type { SpendHolds } from "./holds.js";

/**
 * A service that runs as its own process asks catalog and identity over HTTP; these remember the answers
 * that change only when an operator changes something, until an event says they did. In one process the
 * calls are plain function calls, exact at commit, and nothing is remembered.
 */

export interface MemoryOptions {
  /** Longest an answer is reused, in case an event was missed (a bus outage). */
  ttlMs: number;
  maxEntries: number;
  now?: () => number;
}

/**
 * What changes a resolution: the operator's catalog, guardrails and their key assignments, workspace
 * preferences, and keys (a key's guardrails follow it). Any such event empties the cache in every replica.
 */
const changes = ["catalog.>", "identity.workspace.>", "identity.api_key.>"];

/**
 * Catalog's model resolution, remembered per model, key, workspace and host. Without it every completion
 * costs a call to catalog (an HTTP round trip when catalog is another process) for an answer that changes
 * only when an operator changes something. Presets are not remembered: their versions change without events.
 */
export async function cachedResolve(resolve: (request: ResolveRequest) => Promise<ResolvedModel>, bus: Bus, options: MemoryOptions) {
  const now = options.now ?? Date.now;
  const entries = new Map<string, { model: ResolvedModel; until: number }>();
  // Bumped by every change: a resolution that started before a change may not be stored.
  let epoch = 0;
  const subscription = await bus.listen(changes, async () => {
    epoch++;
    entries.clear();
  });
  return {
    async resolve(request: ResolveRequest): Promise<ResolvedModel> {
      if (request.model.startsWith("@preset/")) return resolve(request);
      const key = `${request.model}\n${request.keyHash}\n${request.workspaceId}\n${request.organizationId}\n${request.host ?? ""}`;
      const hit = entries.get(key);
      if (hit && hit.until > now()) return hit.model;
      const started = epoch;
      const model = await resolve(request);
      if (started === epoch && model.preset === null) {
        if (entries.size >= options.maxEntries) entries.clear();
        entries.set(key, { model, until: now() + options.ttlMs });
      }
      return model;
    },
    stop: () => subscription.stop(),
  };
}

/**
 * Identity's holds, without asking for those it would grant without holding anything: a request with no
 * guardrail budget on a key that identity said has no limit. Most keys have none, and asking is a round
 * trip to identity when it is another process. A key's change (a limit set) is an event that ends this in
 * every replica, just as it ends identity's own memory of the key; until it arrives the answer is the one
 * identity itself would give from its cache.
 */
export async function skippingUnlimitedKeys(holds: SpendHolds, bus: Bus, options: MemoryOptions) {
  const now = options.now ?? Date.now;
  const unlimitedUntil = new Map<string, number>();
  // Bumped by every key change: an answer asked for before a change may not be remembered.
  let epoch = 0;
  const subscription = await bus.listen(["identity.api_key.>"], async (event) => {
    epoch++;
    if ("hash" in event.data) unlimitedUntil.delete(event.data.hash);
  });
  const wrapped: SpendHolds = {
    async hold(request) {
      if (request.budgets.length === 0 && (unlimitedUntil.get(request.key_hash) ?? 0) > now()) return { granted: true };
      const started = epoch;
      const decision = await holds.hold(request);
      if (decision.granted && decision.unlimited && request.budgets.length === 0 && started === epoch) {
        if (unlimitedUntil.size >= options.maxEntries) unlimitedUntil.clear();
        unlimitedUntil.set(request.key_hash, now() + options.ttlMs);
      }
      return decision;
    },
    release: (generationId) => holds.release(generationId),
  };
  return { holds: wrapped, stop: () => subscription.stop() };
}
