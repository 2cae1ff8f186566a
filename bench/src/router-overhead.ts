import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Pool } from "undici";
import { serverNodeFlags } from "@switchyard/runtime";
import { benchConfig } from "./config.js";
import { cpuMs, forkChild, percentile, runLoad } from "./measure.js";

/**
 * What the router adds to an authenticated `GET /api/v1/key` (auth cached): the same request to identity's
 * app directly and through the router, interleaved in one run so machine noise hits both alike.
 * Prints p50/p99 latency, requests per second and gateway CPU per request; writes JSON to bench/results.
 */
const rounds = benchConfig.router.rounds;
const perRound = benchConfig.router.requestsPerRound;
const profileDir = benchConfig.cpuProfileDir;
const concurrencies = [1, 10];

interface Ready {
  routerPort: number;
  directPort: number;
  bootstrapKey: string;
  callerHeader: string;
}

const gateway = forkChild<Ready>({ ...benchConfig.baseEnv }, undefined, serverNodeFlags);
const ready = await gateway.ready;
const usage = gateway.usage;

const targets = {
  direct: { pool: new Pool(`http://127.0.0.1:${ready.directPort}`, { connections: 64 }), headers: { "x-switchyard-caller": ready.callerHeader } },
  router: { pool: new Pool(`http://127.0.0.1:${ready.routerPort}`, { connections: 64 }), headers: { authorization: `Bearer ${ready.bootstrapKey}` } },
};
type TargetName = keyof typeof targets;

async function run(name: TargetName, count: number, concurrency: number) {
  const { pool, headers } = targets[name];
  const before = await usage();
  const { latencies, seconds } = await runLoad(count, concurrency, async () => {
    const res = await pool.request({ method: "GET", path: "/api/v1/key", headers });
    await res.body.text();
    if (res.statusCode !== 200) throw new Error(`${name} answered ${res.statusCode}`);
  });
  const after = await usage();
  return { latencies, seconds, cpuMs: cpuMs(before, after), rss: after.rss };
}

const results = [];
for (const concurrency of concurrencies) {
  for (const name of ["direct", "router"] as const) await run(name, 300, concurrency); // warm-up
  const totals = { direct: { latencies: [] as number[], seconds: 0, cpuMs: 0, rss: 0 }, router: { latencies: [] as number[], seconds: 0, cpuMs: 0, rss: 0 } };
  if (profileDir) await gateway.startProfile();
  for (let round = 0; round < rounds; round++) {
    for (const name of round % 2 ? (["router", "direct"] as const) : (["direct", "router"] as const)) {
      const r = await run(name, perRound, concurrency);
      totals[name].latencies.push(...r.latencies);
      totals[name].seconds += r.seconds;
      totals[name].cpuMs += r.cpuMs;
      totals[name].rss = Math.max(totals[name].rss, r.rss);
    }
  }
  if (profileDir) {
    await mkdir(profileDir, { recursive: true });
    console.log(`CPU profile: ${(await gateway.stopProfile(join(profileDir, `router-overhead-c${concurrency}.cpuprofile`))).profiled}`);
  }
  const summary = (name: TargetName) => {
    const t = totals[name];
    const sorted = [...t.latencies].sort((a, b) => a - b);
    return {
      target: name,
      concurrency,
      requests: sorted.length,
      p50_ms: percentile(sorted, 50),
      p99_ms: percentile(sorted, 99),
      rps: sorted.length / t.seconds,
      cpu_ms_per_request: t.cpuMs / sorted.length,
      peak_rss_mb: t.rss / 1024 / 1024,
    };
  };
  const d = summary("direct");
  const r = summary("router");
  results.push(d, r, {
    target: "router added",
    concurrency,
    requests: r.requests,
    p50_ms: r.p50_ms - d.p50_ms,
    p99_ms: r.p99_ms - d.p99_ms,
    rps: r.rps - d.rps,
    cpu_ms_per_request: r.cpu_ms_per_request - d.cpu_ms_per_request,
    peak_rss_mb: r.peak_rss_mb,
  });
}

const fmt = (n: number) => (Math.abs(n) >= 100 ? n.toFixed(0) : n.toFixed(3));
console.log("\n| target | concurrency | requests | p50 ms | p99 ms | req/s | gateway CPU ms/req | peak RSS MB |");
console.log("|---|---|---|---|---|---|---|---|");
for (const row of results) {
  console.log(
    `| ${row.target} | ${row.concurrency} | ${row.requests} | ${fmt(row.p50_ms)} | ${fmt(row.p99_ms)} | ${fmt(row.rps)} | ${fmt(row.cpu_ms_per_request)} | ${fmt(row.peak_rss_mb)} |`,
  );
}
await mkdir(new URL("../results/", import.meta.url), { recursive: true });
await writeFile(new URL("../results/router-overhead.json", import.meta.url), JSON.stringify({ date: new Date().toISOString(), results }, null, 2));
await Promise.all(Object.values(targets).map((t) => t.pool.close()));
await gateway.stop();
