/**
 * Sticky routing: which endpoint served each session of a model lately, per workspace. The next request of
 * the session goes there first (unless it is resting or had an outage), so a conversation keeps the
 * provider whose prompt cache holds it, as OpenRouter keeps it, also after a fallback or when the live
 * figures that weight the default order change. Kept per inference process, the newest `max` sessions, each
 * for `ttlMs` after its last request; a session one process has not seen takes the seeded default order.
 */
export function sessionEndpoints(options: { max?: number; ttlMs?: number; now?: () => number } = {}) {
  const max = options.max ?? 10_000;
  const ttlMs = options.ttlMs ?? 3_600_000;
  const now = options.now ?? Date.now;
  const served = new Map<string, { provider: string; at: number }>();
  const keyOf = (workspaceId: string, sessionId: string, model: string) => `${workspaceId}\n${model}\n${sessionId}`;
  return {
    /** The provider that last served the session's requests for `model`, while remembered. */
    servedBy(workspaceId: string, sessionId: string, model: string): string | undefined {
      const key = keyOf(workspaceId, sessionId, model);
      const entry = served.get(key);
      if (entry && now() - entry.at <= ttlMs) return entry.provider;
      served.delete(key);
      return undefined;
    },
    /** A provider answered one of the session's requests for `model`. */
    served(workspaceId: string, sessionId: string, model: string, provider: string): void {
      const key = keyOf(workspaceId, sessionId, model);
      // Newest last, so the first entry is the one to forget when full.
      served.delete(key);
      served.set(key, { provider, at: now() });
      if (served.size > max) served.delete(served.keys().next().value!);
    },
  };
}
export type SessionEndpoints = ReturnType<typeof sessionEndpoints>;
