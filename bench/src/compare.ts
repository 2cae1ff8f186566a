import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { Pool } from "undici";
import { chatLoad, emptyTally, type ChatTally } from "./chat-load.js";
import { cleanup, cleanupOnSignals, onCleanup } from "./cleanup.js";
import { baselineChild, benchConfig, type CompareTargetName } from "./config.js";
import { measureRoutingCost, routingGoal } from "./routing-cost.js";
import { checkGoals, cpuVsBaseline, cpuVsChat, signedPercent, verdict } from "./goals.js";
import { markdown, percentile } from "./measure.js";
import { apiNames, dialects, modesOf, pairedChat, planLabel, planMode as mode, servesDialect, skippedTargets, type ChatPlan } from "./plans.js";
import { startPortkeyTarget } from "./portkey-target.js";
import { freshDatabase } from "./database.js";
import { cpuSnapshot, cpuSpent, pidsByComm, rssOf, rssSampler, settle } from "./proc-stats.js";
import { directTarget, startProxyTarget, startStandaloneTarget, startUpstream, writeCatalog, type Target } from "./targets.js";
import { startTopologyTarget } from "./topology-target.js";

/**
 * One-command gateway comparison: the same chat completions sent straight to a fake upstream (direct),
 * through a bare proxy that does nothing between its sockets (proxy, the floor under every gateway),
 * through Switchyard standalone, through Switchyard as separate processes (topology) and through the
 * Portkey gateway, interleaved (for each plan, rounds in which every target runs once, in a rotated order)
 * so machine noise hits all alike. Plans of the Responses API run against Switchyard's targets only, those of
 * Anthropic's Messages API and of the embeddings API against Switchyard's, direct calls and the proxy; their rows say
 * their CPU per request against chat's. Chat plans with a prompt size send a large conversation instead of one
 * message. Each target's RSS is read once it has started, before its first request of the benchmark's load.
 * Prints a Markdown table and the goals, and writes bench/results/compare.json.
 */
const config = benchConfig.compare;
const backendNames = ["postgres", "nats-server"] as const;

/** What one target measured over one plan's rounds. */
interface Measured {
  tally: ChatTally;
  requests: number;
  cpuMs: number;
  backendCpuMs: number;
  upstreamCpuMs: number;
  clientCpuMs: number;
  /** Time waited after the slots' last answers for the target (and the database and bus) to go quiet. */
  settleMs: number;
  peakRss: number;
  /** The largest memory the target's processes took together (`memoryOf`). */
  peakTogether: number;
  /** Each slot's CPU per request, the target's and the upstream's, in the order run: the spread behind the sums. */
  slots: Array<{ cpuMs: number; upstreamCpuMs: number }>;
}

const rotate = <T>(items: T[], by: number) => [...items.slice(by % items.length), ...items.slice(0, by % items.length)];
const sorted = (values: number[]) => [...values].sort((a, b) => a - b);
const mb = (bytes: number) => bytes / 1024 / 1024;
const round3 = (value: number) => Math.round(value * 1000) / 1000;

/**
 * Starts the targets one after another; `startRssMb` gets each one's summed RSS once it is ready (standalone's
 * on the empty data directory of its first start), before the warm-up sends it a request.
 */
async function startTargets(dir: string, upstream: { url: string; pid: number }, catalogPath: string, notes: string[], startRssMb: Record<string, number>): Promise<Target[]> {
  const targets: Target[] = [];
  for (const name of config.targets) {
    const started = performance.now();
    let target: Target | undefined;
    if (name === "direct") target = directTarget(upstream);
    if (name === "proxy") target = await startProxyTarget(upstream);
    if (name === "standalone") target = await startStandaloneTarget(catalogPath, join(dir, "standalone"));
    if (name === "standalone-pg") {
      const database = await freshDatabase(config.databaseUrl).catch((error: unknown) => {
        notes.push(`standalone-pg skipped: Postgres is unreachable (${String(error)})`);
        console.log(`NOTE: standalone-pg skipped: Postgres is unreachable (${String(error)})`);
      });
      if (!database) continue;
      target = await startStandaloneTarget(catalogPath, join(dir, "standalone-pg"), { database });
    }
    if (name === "baseline") target = await startStandaloneTarget(catalogPath, join(dir, "baseline"), { baseline: baselineChild(config.baselineDir) });
    if (name === "portkey") target = await startPortkeyTarget(upstream.url);
    if (name === "topology") {
      const topology = await startTopologyTarget(catalogPath, join(dir, "topology"));
      if ("skipped" in topology) {
        notes.push(`topology skipped: ${topology.skipped}`);
        console.log(`NOTE: topology skipped: ${topology.skipped}`);
        continue;
      }
      target = topology;
    }
    if (!target) continue;
    onCleanup(target.stop);
    targets.push(target);
    startRssMb[name] = round3(mb(target.pids().reduce((sum, pid) => sum + rssOf(pid), 0)));
    console.log(`${name} ready in ${((performance.now() - started) / 1000).toFixed(1)} s (pids ${target.pids().join(" ")}; RSS ${startRssMb[name].toFixed(1)} MB)`);
  }
  return targets;
}

/**
 * Brings every target to its running state (JIT, caches, pools) before a figure is taken: `count` chat
 * requests each, and for each other dialect whose plans will run, half that number more of it to the targets
 * that serve it (half buffered, half streamed; all buffered for embeddings, which are not streamed).
 */
async function warmUp(targets: Target[]) {
  const count = config.startupWarmupRequests;
  if (count === 0) return;
  const others = dialects.filter((dialect) => dialect !== "chat" && config.plans.some((plan) => plan.dialect === dialect));
  const started = performance.now();
  for (const target of targets) {
    const pool = new Pool(target.origin, { connections: 10, headersTimeout: 30_000, bodyTimeout: 30_000 });
    const tally = emptyTally();
    try {
      for (const stream of [false, true]) await chatLoad(pool, target, { dialect: "chat", stream }, Math.ceil(count / 2), 10, tally);
      for (const dialect of others.filter((d) => servesDialect(target.name, d))) {
        const modes = modesOf(dialect);
        for (const stream of modes) await chatLoad(pool, target, { dialect, stream }, (Math.ceil(count / 4) * 2) / modes.length, 10, tally);
      }
    } finally {
      await pool.close();
    }
    if (tally.errors) console.log(`  ${target.name} start-up warm-up: ${tally.errors} errors, e.g. ${tally.errorSamples[0]}`);
  }
  const extra = others.map((dialect) => `, and ${Math.ceil(count / 4) * 2} ${apiNames[dialect]} requests to each target that serves them`).join("");
  console.log(`start-up warm-up: ${count} requests per target (half streamed, c=10)${extra} in ${((performance.now() - started) / 1000).toFixed(0)} s`);
}

/** One measurement slot: `count` requests to one target, with its CPU, the backends' CPU and its RSS around them. */
async function slot(target: Target, upstreamPid: number, pool: Pool, plan: ChatPlan, into: Measured) {
  const before = { own: cpuSnapshot(target.pids()), backend: cpuSnapshot(pidsByComm(backendNames)), upstream: cpuSnapshot([upstreamPid]), client: process.cpuUsage() };
  const rss = rssSampler(() => target.pids());
  const errors = into.tally.errors;
  const count = into.tally.latencies.length;
  await chatLoad(pool, target, plan, config.requestsPerRound, plan.concurrency, into.tally);
  // The slot's CPU includes the work its requests left behind, which then stays out of the next slot.
  into.settleMs += await settle(() => [...target.pids(), ...pidsByComm(backendNames)]);
  const peaks = rss.stop();
  into.peakRss = Math.max(into.peakRss, peaks.rss);
  into.peakTogether = Math.max(into.peakTogether, peaks.together);
  const client = process.cpuUsage(before.client);
  const own = cpuSpent(before.own, cpuSnapshot(target.pids()));
  const upstream = cpuSpent(before.upstream, cpuSnapshot([upstreamPid]));
  const requests = into.tally.latencies.length - count + into.tally.errors - errors;
  into.cpuMs += own;
  into.backendCpuMs += cpuSpent(before.backend, cpuSnapshot(pidsByComm(backendNames)));
  into.upstreamCpuMs += upstream;
  into.clientCpuMs += (client.user + client.system) / 1000;
  into.requests += requests;
  into.slots.push({ cpuMs: own / Math.max(1, requests), upstreamCpuMs: upstream / Math.max(1, requests) });
}

const nothingMeasured = (): Measured => ({ tally: emptyTally(), requests: 0, cpuMs: 0, backendCpuMs: 0, upstreamCpuMs: 0, clientCpuMs: 0, settleMs: 0, peakRss: 0, peakTogether: 0, slots: [] });

/**
 * Each target's figures of a plan, over rounds in which every target runs once, in a rotated order. A plan of
 * another dialect than chat has each target run a slot of its `pairedChat` plan beside each of its own, first
 * in one round and second in the next: `paired` holds those.
 */
async function measurePlan(plan: ChatPlan, targets: Target[], upstreamPid: number) {
  const pools = new Map(targets.map((t) => [t.name, new Pool(t.origin, { connections: plan.concurrency, headersTimeout: 30_000, bodyTimeout: 30_000 })]));
  const pool = (t: Target) => pools.get(t.name)!;
  const chat = pairedChat(plan);
  const plans = chat ? [plan, chat] : [plan];
  try {
    for (const target of targets) {
      const warm = emptyTally();
      for (const each of plans) await chatLoad(pool(target), target, each, config.warmupRequests, plan.concurrency, warm);
      if (warm.errors) console.log(`  ${target.name} warm-up: ${warm.errors} errors, e.g. ${warm.errorSamples[0]}`);
    }
    const profileDir = benchConfig.cpuProfileDir;
    const profiled = profileDir ? targets.filter((t) => t.startProfile) : [];
    for (const target of profiled) await target.startProfile!();
    const measured = new Map<CompareTargetName, Measured>(targets.map((t) => [t.name, nothingMeasured()]));
    const paired = new Map<CompareTargetName, Measured>(chat ? targets.map((t) => [t.name, nothingMeasured()]) : []);
    for (let round = 0; round < config.rounds; round++) {
      for (const target of rotate(targets, round)) {
        for (const each of round % 2 ? [...plans].reverse() : plans) {
          await slot(target, upstreamPid, pool(target), each, (each === plan ? measured : paired).get(target.name)!);
        }
      }
    }
    const label = `${plan.dialect === "chat" ? "" : `${plan.dialect}-`}${mode(plan)}-c${plan.concurrency}${plan.prompt ? `-${plan.prompt}` : ""}`;
    for (const target of profiled) console.log(`  CPU profile: ${await target.stopProfile!(label)}`);
    return { measured, paired };
  } finally {
    await Promise.all([...pools.values()].map((p) => p.close()));
  }
}

/**
 * The figures of one target and plan; `added` columns against direct calls of the same plan, and a dialect's
 * CPU against the chat requests paired with it (`chat`).
 */
function row(name: CompareTargetName, plan: ChatPlan, m: Measured, direct: Measured | undefined, chat: Measured | undefined) {
  const latencies = sorted(m.tally.latencies);
  const ttfb = sorted(m.tally.ttfb);
  const d = direct && name !== "direct" ? { latencies: sorted(direct.tally.latencies), ttfb: sorted(direct.tally.ttfb) } : undefined;
  const perRequest = (ms: number) => ms / Math.max(1, m.requests);
  return {
    target: name,
    dialect: plan.dialect,
    mode: mode(plan),
    concurrency: plan.concurrency,
    /** The prompt size of a chat plan's large conversation (`64k`, `256k`); undefined (absent from the JSON) for the one-message body. */
    prompt: plan.prompt,
    requests: latencies.length,
    errors: m.tally.errors,
    rps: latencies.length / Math.max(1e-9, m.tally.seconds),
    p50_ms: percentile(latencies, 50),
    p90_ms: percentile(latencies, 90),
    p99_ms: percentile(latencies, 99),
    added_p50_ms: d ? percentile(latencies, 50) - percentile(d.latencies, 50) : undefined,
    added_p99_ms: d ? percentile(latencies, 99) - percentile(d.latencies, 99) : undefined,
    ttfb_p50_ms: plan.stream ? percentile(ttfb, 50) : undefined,
    ttfb_p99_ms: plan.stream ? percentile(ttfb, 99) : undefined,
    added_ttfb_p50_ms: plan.stream && d ? percentile(ttfb, 50) - percentile(d.ttfb, 50) : undefined,
    cpu_ms_per_request: perRequest(m.cpuMs),
    /** Rows of other dialects than chat: the CPU per request of the chat requests sent to this target in the plan's rounds, and their failures. */
    chat_cpu_ms_per_request: chat && chat.cpuMs / Math.max(1, chat.requests),
    chat_errors: chat?.tally.errors,
    /** Rows of other dialects than chat: CPU per request against `chat_cpu_ms_per_request` (0.04 is 4% more). */
    cpu_vs_chat: undefined as number | undefined,
    /** Standalone rows, when the `baseline` target ran: CPU per request against its row of the same plan (-0.08 is 8% less). */
    cpu_vs_baseline: undefined as number | undefined,
    backend_cpu_ms_per_request: perRequest(m.backendCpuMs),
    upstream_cpu_ms_per_request: perRequest(m.upstreamCpuMs),
    client_cpu_ms_per_request: perRequest(m.clientCpuMs),
    settle_ms_per_slot: m.settleMs / config.rounds,
    cpu_ms_per_request_by_slot: m.slots.map((slot) => round3(slot.cpuMs)),
    chat_cpu_ms_per_request_by_slot: chat?.slots.map((slot) => round3(slot.cpuMs)),
    upstream_cpu_ms_per_request_by_slot: m.slots.map((slot) => round3(slot.upstreamCpuMs)),
    peak_rss_mb: mb(m.peakRss),
    peak_memory_mb: mb(m.peakTogether),
    error_samples: m.tally.errorSamples,
  };
}
type Row = ReturnType<typeof row>;

const dash = (value: number | undefined) => value ?? "-";
/** A row as the printed table shows it. */
const columns = (r: Row) => ({
  target: r.target,
  dialect: r.dialect,
  prompt: r.prompt ?? "-",
  mode: r.mode,
  c: r.concurrency,
  requests: r.requests,
  errors: r.errors,
  "req/s": r.rps,
  "p50 ms": r.p50_ms,
  "p99 ms": r.p99_ms,
  "added p50 ms": dash(r.added_p50_ms),
  "added p99 ms": dash(r.added_p99_ms),
  "TTFB p50 ms": dash(r.ttfb_p50_ms),
  "added TTFB p50 ms": dash(r.added_ttfb_p50_ms),
  "CPU ms/req": r.cpu_ms_per_request,
  "CPU vs chat": r.cpu_vs_chat === undefined ? "-" : signedPercent(r.cpu_vs_chat),
  "backend CPU ms/req": r.backend_cpu_ms_per_request,
  "peak RSS MB": r.peak_rss_mb,
});

/** The rows as a markdown table; a run with a `baseline` gets its column. */
function table(rows: Row[]) {
  const withBaseline = rows.some((r) => r.target === "baseline");
  const vsBaseline = (r: Row) => ({ "CPU vs baseline": r.cpu_vs_baseline === undefined ? "-" : signedPercent(r.cpu_vs_baseline) });
  return markdown(rows.map((r) => (withBaseline ? { ...columns(r), ...vsBaseline(r) } : columns(r))));
}

async function main() {
  const started = { date: new Date().toISOString(), loadavg: loadavg() };
  const skipped = skippedTargets(config.plans, config.targets);
  console.log(
    `Gateway comparison: targets ${config.targets.join(", ")}; plans ${config.plans.map(planLabel).join(", ")}; ` +
      skipped.map((note) => `${note}; `).join("") +
      `${config.rounds} rounds × ${config.requestsPerRound} requests per target and plan (warm-up ${config.startupWarmupRequests} at start, ${config.warmupRequests} per plan); ` +
      `${config.targets.includes("topology") ? `topology with ${config.topologyInferenceReplicas} inference process${config.topologyInferenceReplicas > 1 ? "es" : ""}; ` : ""}` +
      `${cpus().length} CPUs, load ${started.loadavg.map((l) => l.toFixed(2)).join(" ")}`,
  );
  // Measured first, in this process, before the targets load the machine.
  const routing = await measureRoutingCost();
  console.log(`routing (${routing.endpoints} endpoints), µs per request with live figures: ${Object.entries(routing.with_figures_us).map(([k, v]) => `${k} ${v.toFixed(2)}`).join(", ")}; without: ${Object.entries(routing.without_figures_us).map(([k, v]) => `${k} ${v.toFixed(2)}`).join(", ")}`);
  const dir = await mkdtemp(join(tmpdir(), "switchyard-bench-"));
  onCleanup(() => rm(dir, { recursive: true, force: true }));
  const upstream = await startUpstream();
  onCleanup(upstream.stop);
  const catalogPath = await writeCatalog(dir, upstream.url);
  const notes: string[] = [...skipped];
  const startRssMb: Record<string, number> = {};
  const targets = await startTargets(dir, upstream, catalogPath, notes, startRssMb);
  await warmUp(targets);

  const rows: Row[] = [];
  for (const plan of config.plans) {
    const planTargets = targets.filter((t) => servesDialect(t.name, plan.dialect));
    if (planTargets.length === 0) {
      console.log(`${planLabel(plan)}: skipped, no target running serves it`);
      continue;
    }
    const planStarted = performance.now();
    const { measured, paired } = await measurePlan(plan, planTargets, upstream.pid);
    const planRows = planTargets.map((t) => row(t.name, plan, measured.get(t.name)!, measured.get("direct"), paired.get(t.name)));
    for (const r of planRows) r.cpu_vs_chat = cpuVsChat(r);
    rows.push(...planRows);
    const summary = planRows.map((r) => {
      const vsChat = r.cpu_vs_chat;
      const vsBaseline = cpuVsBaseline(r, rows);
      const cpu =
        plan.dialect === "chat" && vsBaseline === undefined
          ? ""
          : ` cpu ${r.cpu_ms_per_request.toFixed(3)} ms/req${vsChat === undefined ? "" : ` cpu vs chat ${signedPercent(vsChat)}`}${vsBaseline === undefined ? "" : ` cpu vs baseline ${signedPercent(vsBaseline)}`}`;
      return `${r.target} p50 ${r.p50_ms.toFixed(2)} ms ${r.rps.toFixed(0)} req/s${cpu}${r.errors ? ` ${r.errors} errors` : ""}`;
    });
    console.log(`${planLabel(plan)} (${((performance.now() - planStarted) / 1000).toFixed(0)} s): ${summary.join("; ")}`);
  }
  for (const r of rows) r.cpu_vs_baseline = cpuVsBaseline(r, rows);

  console.log(`\n${table(rows)}\n`);
  const goals = [...checkGoals(rows, startRssMb), routingGoal(routing)];
  console.log(`${markdown(goals.map((g) => ({ goal: g.goal, measured: g.measured, "": verdict(g) })))}\n`);
  for (const note of notes) console.log(`NOTE: ${note}`);
  const failed = rows.filter((r) => r.errors > 0);
  for (const r of failed) console.log(`ERRORS ${r.target} ${r.dialect} ${r.mode} c=${r.concurrency}${r.prompt ? ` ${r.prompt} prompt` : ""}: ${r.errors}, e.g.\n  ${r.error_samples.join("\n  ")}`);
  const finished = { date: new Date().toISOString(), loadavg: loadavg() };
  console.log(`load average at start ${started.loadavg.map((l) => l.toFixed(2)).join(" ")}, at end ${finished.loadavg.map((l) => l.toFixed(2)).join(" ")}`);

  const results = new URL("../results/", import.meta.url);
  await mkdir(results, { recursive: true });
  const file = new URL("compare.json", results);
  await writeFile(
    file,
    JSON.stringify(
      {
        started,
        finished,
        machine: { cpus: cpus().length, cpu_model: cpus()[0]?.model, node: process.version },
        settings: {
          rounds: config.rounds,
          requests_per_round: config.requestsPerRound,
          startup_warmup_requests: config.startupWarmupRequests,
          warmup_requests: config.warmupRequests,
          plans: config.plans,
          targets: targets.map((t) => t.name),
          topology_inference_replicas: config.topologyInferenceReplicas,
        },
        notes,
        start_rss_mb: startRssMb,
        routing,
        goals,
        rows,
      },
      null,
      2,
    ),
  );
  console.log(`Results: ${file.pathname}`);
}

cleanupOnSignals();
try {
  await main();
} finally {
  await cleanup();
}
