import { endpointStatsResponse, type EndpointStatsEntry } from "@switchyard/contracts";
import type { InternalClient, Logger } from "@switchyard/runtime";
import { endpointStatsKey } from "@switchyard/upstream";

/** One service's live endpoint figures (inference's, media's). */
export type EndpointStatsSource = () => Promise<EndpointStatsEntry[]>;
/** The figures by `<provider>\n<model>`, as the endpoint listings read them. */
export type EndpointStatsLookup = () => Promise<ReadonlyMap<string, EndpointStatsEntry>>;

/** Over a service's `POST /internal/endpoint-stats`. */
export const remoteEndpointStats =
  (client: InternalClient): EndpointStatsSource =>
  async () =>
    (await client.post("/internal/endpoint-stats", {}, endpointStatsResponse))?.data ?? [];

interface SourceState {
  read: EndpointStatsSource;
  entries: EndpointStatsEntry[];
  readAt: number;
  reading: Promise<void> | undefined;
  failing: boolean;
}

/**
 * The figures of every source, each read at most once per `ttlMs` (they change every few seconds), with
 * concurrent listings sharing one read. A source that fails keeps its last figures (logged once until it
 * answers again), and a listing waits at most `waitMs` for a read: past it, it shows the last figures and
 * the read goes on for the next listing.
 */
export function cachedEndpointStats(sources: readonly EndpointStatsSource[], logger: Logger, options: { ttlMs?: number; waitMs?: number } = {}): EndpointStatsLookup {
  const { ttlMs = 2_000, waitMs = 500 } = options;
  const states: SourceState[] = sources.map((read) => ({ read, entries: [], readAt: -Infinity, reading: undefined, failing: false }));
  const refresh = (state: SourceState) =>
    (state.reading ??= state
      .read()
      .then((entries) => {
        state.entries = entries;
        state.readAt = Date.now();
        state.failing = false;
      })
      .catch((error: unknown) => {
        if (!state.failing) logger.warn({ err: error }, "endpoint statistics could not be read; the listings keep the last figures");
        state.failing = true;
      })
      .finally(() => {
        state.reading = undefined;
      }));
  return async () => {
    const reads = states.filter((s) => Date.now() - s.readAt >= ttlMs).map(refresh);
    if (reads.length) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([Promise.all(reads), new Promise((resolve) => (timer = setTimeout(resolve, waitMs)))]);
      clearTimeout(timer);
    }
    return new Map(states.flatMap((s) => s.entries).map((e) => [endpointStatsKey(e.provider, e.model), e]));
  };
}
