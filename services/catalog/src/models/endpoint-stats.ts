import { endpointStatsResponse, type EndpointStatsEntry } from "@switchyard/contracts";
import type { InternalClient, Logger } from "@switchyard/runtime";

/** Every endpoint's live figures, from the services that call providers (inference, media). */
export type EndpointStatsSource = () => Promise<EndpointStatsEntry[]>;
/** The figures by `<provider>\n<model>`, as the endpoint listings read them. */
export type EndpointStatsLookup = () => Promise<ReadonlyMap<string, EndpointStatsEntry>>;

export const statsKey = (provider: string, model: string) => `${provider}\n${model}`;

/** Over inference's and media's `POST /internal/endpoint-stats`; a service that does not answer adds nothing. */
export function remoteEndpointStats(clients: readonly InternalClient[], logger: Logger): EndpointStatsSource {
  return async () => {
    const answers = await Promise.allSettled(clients.map((c) => c.post("/internal/endpoint-stats", {}, endpointStatsResponse)));
    const failed = answers.find((a) => a.status === "rejected");
    if (failed) logger.warn({ err: failed.reason }, "endpoint statistics could not be read from every service; their endpoints list without figures");
    return answers.flatMap((a) => (a.status === "fulfilled" ? (a.value?.data ?? []) : []));
  };
}

/**
 * The figures read at most once per `ttlMs` (they change every few seconds), and concurrent listings share
 * one read. A read that fails leaves the last figures in place.
 */
export function cachedEndpointStats(source: EndpointStatsSource, logger: Logger, ttlMs = 2_000): EndpointStatsLookup {
  let figures: ReadonlyMap<string, EndpointStatsEntry> = new Map();
  let readAt = -Infinity;
  let reading: Promise<ReadonlyMap<string, EndpointStatsEntry>> | undefined;
  return () => {
    if (Date.now() - readAt < ttlMs) return Promise.resolve(figures);
    reading ??= source()
      .then((entries) => {
        figures = new Map(entries.map((e) => [statsKey(e.provider, e.model), e]));
        readAt = Date.now();
        return figures;
      })
      .catch((error: unknown) => {
        logger.warn({ err: error }, "endpoint statistics could not be read; the listing keeps the last figures");
        return figures;
      })
      .finally(() => {
        reading = undefined;
      });
    return reading;
  };
}
