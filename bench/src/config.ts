/** Benchmark knobs, read once. Nothing else in the benchmarks reads the environment. */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { defaultPlans, parsePlans } from "./plans.js";

const env = process.env;
const number = (name: string, fallback: number) => {
  const value = Number(env[name] ?? fallback);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a number, not ${env[name]}`);
  return value;
};

/**
 * The gateway child of the checkout in `dir`, built (`bench/dist/gateway-child.js`), which the `baseline`
 * target runs: another build of Switchyard standalone, measured in the same run, slot for slot, as this one.
 */
export function baselineChild(dir: string | undefined): string {
  if (!dir) throw new Error("BENCH_TARGETS has baseline: set BENCH_BASELINE_DIR to another checkout of Switchyard, built");
  const child = resolve(dir, "bench/dist/gateway-child.js");
  if (!existsSync(child)) throw new Error(`BENCH_BASELINE_DIR: ${child} is missing; build that checkout first (npm ci && npx turbo run build)`);
  return child;
}

const replicas = (text: string): 1 | 2 => {
  if (text !== "1" && text !== "2") throw new Error(`BENCH_TOPOLOGY_INFERENCE_REPLICAS must be 1 or 2, not ${text}`);
  return text === "1" ? 1 : 2;
};

/** What `npm run bench` can measure; `baseline` runs only when asked (it needs `BENCH_BASELINE_DIR`). */
export const compareTargetNames = ["direct", "proxy", "standalone", "standalone-pg", "topology", "portkey", "baseline"] as const;
const defaultTargets = compareTargetNames.filter((name) => name !== "baseline");
export type CompareTargetName = (typeof compareTargetNames)[number];

export const benchConfig = {
  logLevel: env.LOG_LEVEL ?? "warn",
  /** When set, the standalone gateway writes CPU profiles of the measured phases here and the topology's processes theirs under `topology/`. */
  cpuProfileDir: env.BENCH_CPU_PROF_DIR,
  /** Set by the benchmark for the processes it profiles through `cpu-profile-preload` (SIGUSR2 starts and stops a profile). */
  signalProfileDir: env.BENCH_SIGNAL_PROFILE_DIR,
  /** Set by the benchmark for the `proxy` target's process: the upstream it forwards to. */
  proxyUpstream: env.BENCH_PROXY_UPSTREAM,
  /** The environment the benchmark was started with, for the processes it starts (each drops what must not reach it). */
  baseEnv: { ...env } as Record<string, string | undefined>,

  /** Router overhead (`npm run bench:router`). */
  router: {
    rounds: number("BENCH_ROUNDS", 6),
    requestsPerRound: number("BENCH_REQUESTS", 1000),
  },

  /** Gateway comparison (`npm run bench`). */
  compare: {
    rounds: number("BENCH_ROUNDS", 5),
    requestsPerRound: number("BENCH_REQUESTS", 1000),
    /** Requests per target and plan before the measured rounds (connections opened, code warmed). */
    warmupRequests: number("BENCH_WARMUP_REQUESTS", 300),
    /**
     * Requests per target once all have started, before the first plan: half buffered, half streamed, at
     * concurrency 10. A Node gateway's JIT and caches need thousands of requests to settle; without this the
     * first plan (concurrency 1) measured start-up rather than a running gateway.
     */
    startupWarmupRequests: number("BENCH_STARTUP_WARMUP_REQUESTS", 6000),
    /** `[dialect:]mode:concurrency` (see plans.ts, which also says which targets each dialect's plans run against). */
    plans: parsePlans(env.BENCH_CHAT_PLANS ?? defaultPlans),
    targets: (env.BENCH_TARGETS ?? defaultTargets.join(",")).split(",").map((name) => {
      const target = compareTargetNames.find((known) => known === name.trim());
      if (!target) throw new Error(`BENCH_TARGETS: unknown target ${name} (known: ${compareTargetNames.join(", ")})`);
      return target;
    }),
    /**
     * Inference processes in the topology (1 or 2). One, as every other service: the comparison is of one
     * deployment's hops, and two replicas of one service on the same two cores split its batches and add a
     * process to every slot's scheduling (see bench/README.md for the figures of both).
     */
    topologyInferenceReplicas: replicas(env.BENCH_TOPOLOGY_INFERENCE_REPLICAS ?? "1"),
    /** The checkout whose standalone the `baseline` target runs (see `baselineChild`). */
    baselineDir: env.BENCH_BASELINE_DIR,
    /** The Postgres server the topology and standalone-pg targets make their databases on (fresh ones per run, dropped at the end). */
    databaseUrl: env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres",
    natsUrl: env.NATS_URL ?? "nats://127.0.0.1:4222",
  },

  /** Content filters (`node bench/dist/content-filters.js`). */
  contentFilters: {
    rounds: number("BENCH_CF_ROUNDS", 5),
    iterations: number("BENCH_CF_ITERATIONS", 2000),
    warmup: number("BENCH_CF_WARMUP", 1000),
  },

  /** Activity reads at scale (`npm run bench:activity -w bench`). */
  activity: {
    generations: number("BENCH_ACTIVITY_GENERATIONS", 1_000_000),
    /** Events per `recordCharges` call while filling. */
    batch: number("BENCH_ACTIVITY_BATCH", 2000),
    /** Timed runs per query, after a few untimed ones. */
    runs: number("BENCH_ACTIVITY_RUNS", 20),
    /** `1` prints each query's `EXPLAIN (ANALYZE, BUFFERS)`. */
    explain: env.BENCH_ACTIVITY_EXPLAIN === "1",
    /** The Postgres server the benchmark makes its database on (`switchyard_bench_activity_<pid>`, dropped at the end). */
    databaseUrl: env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres",
  },

  /** Soak (`npm run bench:soak`). */
  soak: {
    seconds: number("BENCH_SOAK_SECONDS", 300),
    warmupSeconds: number("BENCH_SOAK_WARMUP_SECONDS", 60),
    /** Requests per second, started on schedule whatever the answers' pace (half of them streamed by default). */
    rate: number("BENCH_SOAK_RATE", 100),
    streamShare: number("BENCH_SOAK_STREAM_SHARE", 0.5),
    /** Requests in flight at most; a request due while that limit is reached is counted as skipped, not sent. */
    maxInFlight: number("BENCH_SOAK_MAX_IN_FLIGHT", 200),
    sampleSeconds: number("BENCH_SOAK_SAMPLE_SECONDS", 5),
  },
};
