import { mkdtemp, mkdir, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Pool } from "undici";
import { benchConfig } from "./config.js";
import { cpuMs, forkChild, markdown, percentile, runLoad, type Sample } from "./measure.js";

/**
 * What the gateway (router + inference, standalone) adds to a chat completion against an upstream that
 * answers at once, beside direct calls to the same upstream, interleaved in one run. Non-streaming at
 * concurrency 1, 10, 50; streaming at 1 and 10 with time to first byte and to `[DONE]`.
 */
const perRound = Math.max(100, Math.floor(benchConfig.requestsPerRound / 2));
const rounds = benchConfig.rounds;
// The upstream runs in its own process: direct calls then cross processes as gateway calls do.
const upstreamProcess = forkChild<{ url: string }>({}, "./upstream-child.js");
const upstream = await upstreamProcess.ready;
const dir = await mkdtemp(join(tmpdir(), "switchyard-bench-"));
const catalogPath = join(dir, "catalog.json");
await writeFile(
  catalogPath,
  JSON.stringify({
    providers: [{ slug: "bench", name: "Bench", adapter: "openai-compatible", base_url: upstream.url, requires_api_key: false }],
    models: [{ id: "bench/model", name: "Bench", context_length: 8000, endpoints: [{ provider: "bench", upstream_model: "bench", pricing: { prompt: "0.000001", completion: "0.000002" } }] }],
  }),
);
const gateway = forkChild<{ routerPort: number; bootstrapKey: string }>({ ...benchConfig.gatewayEnv, SWITCHYARD_CONFIG: catalogPath, SWITCHYARD_DATA_DIR: join(dir, "data") });
const ready = await gateway.ready;
const made = (await (
  await fetch(`http://127.0.0.1:${ready.routerPort}/api/v1/keys`, {
    method: "POST",
    headers: { authorization: `Bearer ${ready.bootstrapKey}`, "content-type": "application/json" },
    body: JSON.stringify({ name: "bench" }),
  })
).json()) as { key: string };

const messages = [{ role: "user", content: "Say hello" }];
const targets = {
  direct: { pool: new Pool(new URL(upstream.url).origin, { connections: 64 }), path: "/v1/chat/completions", headers: {}, model: "bench" },
  gateway: { pool: new Pool(`http://127.0.0.1:${ready.routerPort}`, { connections: 64 }), path: "/api/v1/chat/completions", headers: { authorization: `Bearer ${made.key}` }, model: "bench/model" },
};
type Name = keyof typeof targets;

/** One request; for streams, records time to first byte beside the total. */
async function call(name: Name, stream: boolean, ttfb: number[]): Promise<number> {
  const t = targets[name];
  const start = performance.now();
  const res = await t.pool.request({
    method: "POST",
    path: t.path,
    headers: { "content-type": "application/json", ...t.headers },
    body: JSON.stringify({ model: t.model, messages, stream }),
  });
  if (res.statusCode !== 200) throw new Error(`${name} answered ${res.statusCode}: ${await res.body.text()}`);
  let first = true;
  for await (const _chunk of res.body) {
    if (first && stream) ttfb.push(performance.now() - start);
    first = false;
  }
  return performance.now() - start;
}

const rows: Array<Record<string, string | number>> = [];
for (const { stream, concurrency } of benchConfig.chatPlans) {
  const totals: Record<Name, Sample & { ttfb: number[]; cpuMs: number }> = {
    direct: { latencies: [], seconds: 0, ttfb: [], cpuMs: 0 },
    gateway: { latencies: [], seconds: 0, ttfb: [], cpuMs: 0 },
  };
  for (const name of ["direct", "gateway"] as const) await runLoad(200, concurrency, () => call(name, stream, [])); // warm-up
  for (let round = 0; round < rounds; round++) {
    for (const name of round % 2 ? (["gateway", "direct"] as const) : (["direct", "gateway"] as const)) {
      const before = await gateway.usage();
      const sample = await runLoad(perRound, concurrency, () => call(name, stream, totals[name].ttfb));
      totals[name].cpuMs += cpuMs(before, await gateway.usage());
      totals[name].latencies.push(...sample.latencies);
      totals[name].seconds += sample.seconds;
    }
  }
  const rss = (await gateway.usage()).rss / 1024 / 1024;
  const summary = (name: Name) => {
    const t = totals[name];
    const sorted = [...t.latencies].sort((a, b) => a - b);
    const ttfb = [...t.ttfb].sort((a, b) => a - b);
    return { sorted, ttfb, rps: sorted.length / t.seconds, cpu: t.cpuMs / sorted.length };
  };
  const d = summary("direct");
  const g = summary("gateway");
  rows.push({
    mode: stream ? "stream" : "buffered",
    concurrency,
    "direct p50 ms": percentile(d.sorted, 50),
    "gateway p50 ms": percentile(g.sorted, 50),
    "added p50 ms": percentile(g.sorted, 50) - percentile(d.sorted, 50),
    "added p99 ms": percentile(g.sorted, 99) - percentile(d.sorted, 99),
    "added TTFB p50 ms": stream ? percentile(g.ttfb, 50) - percentile(d.ttfb, 50) : "-",
    "direct req/s": d.rps,
    "gateway req/s": g.rps,
    "gateway CPU ms/req": g.cpu,
    "gateway RSS MB": rss,
  });
}
console.log(`\n${markdown(rows)}`);
await mkdir(new URL("../results/", import.meta.url), { recursive: true });
await writeFile(new URL("../results/chat-overhead.json", import.meta.url), JSON.stringify({ date: new Date().toISOString(), rows }, null, 2));
await Promise.all(Object.values(targets).map((t) => t.pool.close()));
await upstreamProcess.stop();
await gateway.stop();
