import { randomUUID } from "node:crypto";
import type { EndpointStatsEntry } from "@switchyard/contracts";
import type { Logger, Queryable } from "@switchyard/runtime";
import type { Attempt } from "../attempts.js";
import { add, merge, percentiles, type Histogram, type Percentiles } from "./histogram.js";
import { pruneBuckets, readAttemptTotals, readBuckets, writeBuckets, type BucketRow } from "./store.js";

/** How an endpoint has been doing, every replica's generations together. */
export interface EndpointFigures {
  /** Time to the first output over the last 30 minutes, in milliseconds. */
  latency: Percentiles | null;
  /** Output tokens per second over the last 30 minutes. */
  throughput: Percentiles | null;
  /** Percent of attempts without a provider-side failure; null without attempts. */
  uptime5m: number | null;
  uptime30m: number | null;
  uptime1d: number | null;
  /** The same over about the last bucket (a sliding window), which the default order reads. */
  recentUptime: number | null;
  /** Attempts in that window. */
  recentAttempts: number;
}

export interface EndpointStatsOptions {
  db: Queryable;
  schema: string;
  logger: Logger;
  /** Width of a time bucket: the resolution of the windows and of `recentUptime`. */
  bucketMs: number;
  /** How often this replica writes what it measured and reads everyone's. */
  intervalMs: number;
  now?: () => number;
}

export interface EndpointStats {
  /** An attempt the endpoint accepted (`ok`) or failed on its side (5xx, timeout, unreachable). */
  attempted(provider: string, model: string, ok: boolean): void;
  /** A generation the endpoint served: its time to first output and output tokens per second, where known. */
  served(provider: string, model: string, sample: { firstOutputMs: number | null; throughput: number | null }): void;
  figures(provider: string, model: string): EndpointFigures | undefined;
  /** Every endpoint with figures. */
  all(): Array<{ provider: string; model: string; figures: EndpointFigures }>;
  /** Writes what this replica measured, then reads everyone's figures again. */
  refresh(): Promise<void>;
  stop(): Promise<void>;
}

/** How an endpoint's figures are keyed, here and in the catalog's listings: `<provider>\n<model>`. */
export const endpointStatsKey = (provider: string, model: string) => `${provider}\n${model}`;

const minute = 60_000;
const windows = { d1: 1440 * minute, m30: 30 * minute, m5: 5 * minute };
const uptime = (succeeded: number, failed: number) => (succeeded + failed ? Math.round((10_000 * succeeded) / (succeeded + failed)) / 100 : null);

interface Totals {
  provider: string;
  model: string;
  firstOutput: Histogram;
  throughput: Histogram;
  m5: [number, number];
  m30: [number, number];
  d1: [number, number];
  recent: [number, number];
}

/**
 * Live endpoint statistics shared by every replica through the service's own database. Each replica counts
 * its attempts and generations per endpoint in time buckets in memory, writes its buckets every `intervalMs`
 * and reads back every replica's, from which it computes the figures `GET /models/{id}/endpoints` publishes
 * and routing reads (a map lookup, no I/O on the request's path). A database that is away leaves the last
 * figures in place and the buckets in memory until it answers.
 */
export function startEndpointStats(options: EndpointStatsOptions): EndpointStats {
  const { db, schema, logger, bucketMs, intervalMs } = options;
  const now = options.now ?? Date.now;
  const replica = randomUUID();
  const open = new Map<string, BucketRow & { dirty: boolean }>();
  let figures = new Map<string, { provider: string; model: string; figures: EndpointFigures }>();
  let failures = 0;
  let prunedAt = 0;
  /** The day's attempts before the last 30 minutes, read once per bucket. */
  let earlier: { bucket: number; totals: Awaited<ReturnType<typeof readAttemptTotals>> } = { bucket: Number.NaN, totals: [] };
  let running: Promise<void> | undefined;
  let queued: Promise<void> | undefined;

  function bucket(provider: string, model: string) {
    const at = Math.floor(now() / bucketMs) * bucketMs;
    const key = `${endpointStatsKey(provider, model)}\n${at}`;
    let row = open.get(key);
    if (!row) open.set(key, (row = { provider, model, at, succeeded: 0, failed: 0, first_output: {}, throughput: {}, dirty: true }));
    row.dirty = true;
    return row;
  }

  async function write(): Promise<void> {
    const dirty = [...open.values()].filter((r) => r.dirty);
    for (const r of dirty) r.dirty = false;
    try {
      await writeBuckets(db, schema, replica, dirty);
    } catch (error) {
      for (const r of dirty) r.dirty = true;
      throw error;
    }
    const current = Math.floor(now() / bucketMs) * bucketMs;
    for (const [key, r] of open) if (!r.dirty && r.at < current) open.delete(key);
  }

  /**
   * Reads the buckets of the last 30 minutes (from a bucket boundary) every time, and the day's attempts
   * before them only when a new bucket starts: they cannot change in between, and summing a day of rows
   * every few seconds on every replica would cost the database more than all the rest.
   */
  async function read(): Promise<void> {
    const t = now();
    const current = Math.floor(t / bucketMs) * bucketMs;
    const cut = current - windows.m30;
    if (earlier.bucket !== current) earlier = { bucket: current, totals: await readAttemptTotals(db, schema, current - windows.d1, cut) };
    // The previous bucket counts for the part of it that is still within one bucket width of now.
    const previousWeight = 1 - (t - current) / bucketMs;
    const rows = await readBuckets(db, schema, cut);
    const totals = new Map<string, Totals>();
    const entry = (provider: string, model: string) => {
      const key = endpointStatsKey(provider, model);
      let e = totals.get(key);
      if (!e) totals.set(key, (e = { provider, model, firstOutput: {}, throughput: {}, m5: [0, 0], m30: [0, 0], d1: [0, 0], recent: [0, 0] }));
      return e;
    };
    for (const d of earlier.totals) {
      const e = entry(d.provider, d.model);
      e.d1[0] += d.succeeded;
      e.d1[1] += d.failed;
    }
    for (const r of rows) {
      const e = entry(r.provider, r.model);
      e.d1[0] += r.succeeded;
      e.d1[1] += r.failed;
      if (r.at < t - windows.m30) continue;
      merge(e.firstOutput, r.first_output);
      merge(e.throughput, r.throughput);
      e.m30[0] += r.succeeded;
      e.m30[1] += r.failed;
      if (r.at >= t - windows.m5) {
        e.m5[0] += r.succeeded;
        e.m5[1] += r.failed;
      }
      const weight = r.at === current ? 1 : r.at === current - bucketMs ? previousWeight : 0;
      e.recent[0] += weight * r.succeeded;
      e.recent[1] += weight * r.failed;
    }
    const next = new Map<string, { provider: string; model: string; figures: EndpointFigures }>();
    for (const [key, e] of totals) {
      next.set(key, {
        provider: e.provider,
        model: e.model,
        figures: {
          latency: percentiles(e.firstOutput),
          throughput: percentiles(e.throughput),
          uptime5m: uptime(...e.m5),
          uptime30m: uptime(...e.m30),
          uptime1d: uptime(...e.d1),
          recentUptime: uptime(...e.recent),
          recentAttempts: e.recent[0] + e.recent[1],
        },
      });
    }
    figures = next;
    if (t - prunedAt > 10 * minute) {
      prunedAt = t;
      await pruneBuckets(db, schema, t - windows.d1 - bucketMs);
    }
  }

  async function once(): Promise<void> {
    try {
      await write();
      await read();
      if (failures) logger.info({ failures }, "endpoint statistics are written and read again");
      failures = 0;
    } catch (error) {
      if (failures++ % 20 === 0) logger.warn({ err: error, failures }, "endpoint statistics could not be written or read; routing keeps the last figures");
    }
  }

  /** One refresh at a time; a call during one gets the next, so what it was told before is written. */
  function refresh(): Promise<void> {
    if (running) return (queued ??= running.then(() => ((queued = undefined), refresh())));
    return (running = once().finally(() => (running = undefined)));
  }

  const timer = setInterval(() => void refresh(), intervalMs);
  timer.unref();
  void refresh();

  return {
    attempted(provider, model, ok) {
      const row = bucket(provider, model);
      if (ok) row.succeeded++;
      else row.failed++;
    },
    served(provider, model, sample) {
      if (sample.firstOutputMs === null && sample.throughput === null) return;
      const row = bucket(provider, model);
      if (sample.firstOutputMs !== null) add(row.first_output, sample.firstOutputMs);
      if (sample.throughput !== null) add(row.throughput, sample.throughput);
    },
    figures: (provider, model) => figures.get(endpointStatsKey(provider, model))?.figures,
    all: () => [...figures.values()],
    refresh,
    async stop() {
      clearInterval(timer);
      await (queued ?? running);
      await write().catch((error: unknown) => logger.warn({ err: error }, "endpoint statistics of the last seconds could not be written"));
    },
  };
}

/**
 * What one served generation says of its endpoint: the time to its first output (the whole answer's when it
 * was not streamed) and its output tokens per second (counted from the first output when streamed), both
 * from when the serving attempt was sent (`dispatchMs` after the generation started; where it is not known,
 * after the failed attempts before it): the gateway's own time and other endpoints' failures are not its.
 */
export function servedSample(g: { attempts: readonly Attempt[]; dispatchMs?: number | undefined; streamed: boolean; firstOutputMs: number | null; generationMs: number; completionTokens: number }) {
  const before = g.dispatchMs ?? g.attempts.slice(0, -1).reduce((sum, a) => sum + a.latencyMs, 0);
  const total = Math.max(0, g.generationMs - before);
  const streamedFirst = g.streamed && g.firstOutputMs !== null ? Math.max(0, g.firstOutputMs - before) : null;
  const outputMs = streamedFirst !== null && total > streamedFirst ? total - streamedFirst : total;
  return { firstOutputMs: streamedFirst ?? total, throughput: g.completionTokens > 0 && outputMs > 0 ? (1000 * g.completionTokens) / outputMs : null };
}

/** Every endpoint's figures as `POST /internal/endpoint-stats` answers them. */
export const endpointStatsEntries = (stats: Pick<EndpointStats, "all">): EndpointStatsEntry[] =>
  stats.all().map(({ provider, model, figures: f }) => ({
    provider,
    model,
    latency_last_30m: f.latency,
    throughput_last_30m: f.throughput,
    uptime_last_5m: f.uptime5m,
    uptime_last_30m: f.uptime30m,
    uptime_last_1d: f.uptime1d,
  }));
