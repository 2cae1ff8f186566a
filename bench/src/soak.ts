import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { Pool } from "undici";
import { chatRequest, emptyTally, loadRequest } from "./chat-load.js";
import { cleanup, cleanupOnSignals, onCleanup } from "./cleanup.js";
import { benchConfig } from "./config.js";
import { markdown, percentile } from "./measure.js";
import { cpuMsOf, rssOf } from "./proc-stats.js";
import { startStandaloneTarget, startUpstream, writeCatalog } from "./targets.js";

/**
 * Soak: Switchyard standalone (embedded defaults, its own process) under a fixed request rate, half of the
 * requests streamed, for a warm-up and then the measured period; its RSS sampled every few seconds. Shows
 * whether memory keeps growing once warm. Prints a Markdown table and writes bench/results/soak.json.
 */
const config = benchConfig.soak;
const mb = (bytes: number) => bytes / 1024 / 1024;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface RssSample {
  seconds: number;
  phase: "warm-up" | "measured";
  rss_mb: number;
  heap_used_mb: number;
}

async function main() {
  const startedAt = { date: new Date().toISOString(), loadavg: loadavg() };
  console.log(
    `Soak: ${config.rate} req/s (${Math.round(config.streamShare * 100)}% streamed) for ${config.warmupSeconds} s warm-up + ${config.seconds} s; ` +
      `RSS every ${config.sampleSeconds} s; ${cpus().length} CPUs, load ${startedAt.loadavg.map((l) => l.toFixed(2)).join(" ")}`,
  );
  const dir = await mkdtemp(join(tmpdir(), "switchyard-soak-"));
  onCleanup(() => rm(dir, { recursive: true, force: true }));
  const upstream = await startUpstream();
  onCleanup(upstream.stop);
  const gateway = await startStandaloneTarget(await writeCatalog(dir, upstream.url), join(dir, "standalone"));
  onCleanup(gateway.stop);
  const [pid] = gateway.pids();
  if (pid === undefined) throw new Error("the gateway has no process");
  const pool = new Pool(gateway.origin, { connections: 64, headersTimeout: 30_000, bodyTimeout: 30_000 });
  onCleanup(() => pool.close());

  const requests = { stream: loadRequest(gateway, "chat", true), buffered: loadRequest(gateway, "chat", false) };
  const warmup = emptyTally();
  const measured = { stream: emptyTally(), buffered: emptyTally() };
  const samples: RssSample[] = [];
  const total = config.warmupSeconds + config.seconds;
  const started = performance.now();
  const elapsed = () => (performance.now() - started) / 1000;
  const phase = (): RssSample["phase"] => (elapsed() < config.warmupSeconds ? "warm-up" : "measured");
  const sample = async (): Promise<RssSample> => {
    const s: RssSample = { seconds: Math.round(elapsed()), phase: phase(), rss_mb: mb(rssOf(pid)), heap_used_mb: mb((await gateway.heapUsed?.()) ?? 0) };
    samples.push(s);
    return s;
  };
  await sample();
  const sampler = setInterval(() => void sample(), config.sampleSeconds * 1000);

  let issued = 0;
  let skipped = 0;
  const inFlight = new Set<Promise<void>>();
  let atWarmupEnd: { rss: RssSample; cpuMs: number; issued: number } | undefined;
  let lastReport = 0;
  try {
    while (elapsed() < total) {
      if (!atWarmupEnd && phase() === "measured") atWarmupEnd = { rss: await sample(), cpuMs: cpuMsOf(pid) ?? 0, issued };
      const due = Math.floor(elapsed() * config.rate);
      while (issued < due) {
        const i = issued++;
        // Requests alternate so that `streamShare` of them stream, spread evenly.
        const stream = Math.floor((i + 1) * config.streamShare) > Math.floor(i * config.streamShare);
        if (inFlight.size >= config.maxInFlight) {
          skipped++;
          continue;
        }
        const tally = phase() === "warm-up" ? warmup : stream ? measured.stream : measured.buffered;
        const request = chatRequest(pool, stream ? requests.stream : requests.buffered, tally).finally(() => inFlight.delete(request));
        inFlight.add(request);
      }
      if (elapsed() - lastReport >= 30) {
        lastReport = elapsed();
        const errors = warmup.errors + measured.stream.errors + measured.buffered.errors;
        console.log(`${Math.round(elapsed())} s: ${issued} requests, ${errors} errors, ${skipped} skipped, RSS ${mb(rssOf(pid)).toFixed(0)} MB`);
      }
      await sleep(5);
    }
    await Promise.race([Promise.all(inFlight), sleep(30_000)]);
  } finally {
    clearInterval(sampler);
  }
  const end = await sample();
  const cpuMs = (cpuMsOf(pid) ?? 0) - (atWarmupEnd?.cpuMs ?? 0);

  const after = samples.filter((s) => s.phase === "measured");
  const start = atWarmupEnd?.rss ?? samples[0]!;
  const both = [...measured.stream.latencies, ...measured.buffered.latencies].sort((a, b) => a - b);
  const measuredRequests = issued - (atWarmupEnd?.issued ?? 0);
  const result = {
    rate: config.rate,
    stream_share: config.streamShare,
    warmup_seconds: config.warmupSeconds,
    seconds: config.seconds,
    requests: measuredRequests,
    completed: both.length,
    errors: measured.stream.errors + measured.buffered.errors,
    warmup_errors: warmup.errors,
    skipped,
    p50_ms: percentile(both, 50),
    p99_ms: percentile(both, 99),
    stream_p50_ms: percentile([...measured.stream.latencies].sort((a, b) => a - b), 50),
    buffered_p50_ms: percentile([...measured.buffered.latencies].sort((a, b) => a - b), 50),
    rss_warmup_end_mb: start.rss_mb,
    rss_end_mb: end.rss_mb,
    rss_max_mb: Math.max(...after.map((s) => s.rss_mb), start.rss_mb),
    rss_growth_percent: ((end.rss_mb - start.rss_mb) / start.rss_mb) * 100,
    heap_used_warmup_end_mb: start.heap_used_mb,
    heap_used_end_mb: end.heap_used_mb,
    cpu_percent_of_a_core: (cpuMs / 1000 / config.seconds) * 100,
    cpu_ms_per_request: cpuMs / Math.max(1, measuredRequests),
  };

  console.log(
    `\n${markdown([
      {
        "req/s": result.rate,
        "measured s": result.seconds,
        requests: result.requests,
        errors: result.errors,
        skipped: result.skipped,
        "p50 ms": result.p50_ms,
        "p99 ms": result.p99_ms,
        "RSS after warm-up MB": result.rss_warmup_end_mb,
        "RSS end MB": result.rss_end_mb,
        "RSS max MB": result.rss_max_mb,
        "RSS growth %": result.rss_growth_percent,
        "heap after warm-up MB": result.heap_used_warmup_end_mb,
        "heap end MB": result.heap_used_end_mb,
        "CPU % of a core": result.cpu_percent_of_a_core,
      },
    ])}\n`,
  );
  const samplesErrors = [...warmup.errorSamples, ...measured.stream.errorSamples, ...measured.buffered.errorSamples];
  if (samplesErrors.length) console.log(`ERRORS, e.g.\n  ${samplesErrors.slice(0, 5).join("\n  ")}`);
  const results = new URL("../results/", import.meta.url);
  await mkdir(results, { recursive: true });
  const file = new URL("soak.json", results);
  await writeFile(
    file,
    JSON.stringify({ started: startedAt, finished: { date: new Date().toISOString(), loadavg: loadavg() }, machine: { cpus: cpus().length, node: process.version }, result, samples }, null, 2),
  );
  console.log(`Results: ${file.pathname}`);
}

cleanupOnSignals();
try {
  await main();
} finally {
  await cleanup();
}
