/** Benchmark knobs, read once. */
export const benchConfig = {
  rounds: Number(process.env.BENCH_ROUNDS ?? 6),
  requestsPerRound: Number(process.env.BENCH_REQUESTS ?? 1000),
  logLevel: process.env.LOG_LEVEL ?? "warn",
  /** Chat benchmark rows as `mode:concurrency` pairs, e.g. `buffered:1,stream:10`. */
  chatPlans: (process.env.BENCH_CHAT_PLANS ?? "buffered:1,buffered:10,buffered:50,stream:1,stream:10").split(",").map((plan) => {
    const [mode, concurrency] = plan.split(":");
    return { stream: mode === "stream", concurrency: Number(concurrency) };
  }),
  /** When set, the gateway process writes a V8 CPU profile here (open it in Chrome DevTools). */
  cpuProfileDir: process.env.BENCH_CPU_PROF_DIR,
  /** Passed through to the gateway under test (a real Postgres or NATS when set). */
  gatewayEnv: { ...process.env } as Record<string, string | undefined>,
};
