import type { ResolvedModel, ResolveRequest } from "@switchyard/contracts";
import type { Bus } from "@switchyard/runtime";

/**
 * A service that runs as its own process asks catalog over HTTP; this remembers the answers
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
      const key = `${request.model}\n${request.defaultFor ?? ""}\n${request.keyHash}\n${request.workspaceId}\n${request.organizationId}\n${request.host ?? ""}`;
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
