/** Benchmark knobs, read once. */
export const benchConfig = {
  rounds: Number(process.env.BENCH_ROUNDS ?? 6),
  requestsPerRound: Number(process.env.BENCH_REQUESTS ?? 1000),
  logLevel: process.env.LOG_LEVEL ?? "warn",
  /** When set, the gateway process writes a V8 CPU profile here (open it in Chrome DevTools). */
  cpuProfileDir: process.env.BENCH_CPU_PROF_DIR,
  /** Passed through to the gateway under test (a real Postgres or NATS when set). */
  gatewayEnv: { ...process.env } as Record<string, string | undefined>,
};
