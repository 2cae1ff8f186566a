#!/usr/bin/env node
// Every service as its own process on one machine, on real Postgres, NATS and S3, with two inference
// replicas behind the router: `npm run topology`. It supervises them as a cluster would: a process that
// exits (a SIGTERM sent to its pid, a crash) is started again on the same port. Ctrl-C stops them all,
// routers first and identity last.
//
// Environment: DATABASE_URL, NATS_URL, S3_* (S3_ENDPOINT unset starts the local Swift of scripts/s3, unless
// TOPOLOGY_START_S3=false, which keeps files on disk), TOPOLOGY_PORT (the router's port, default 8080; the
// services take the next ports), TOPOLOGY_INFERENCE_REPLICAS=1 for one inference process instead of two,
// TOPOLOGY_ROUTERS=2 for a second router on TOPOLOGY_PORT + 10 and a TCP balancer in front of both on
// TOPOLOGY_PORT + 20 (new connections go to the routers whose /readyz passes, as a Kubernetes Service does;
// `api` in the ready event is the balancer's), and every variable of the services.
// It prints one JSON line per event: `{"event":"ready",...}` with every process's URL and pid,
// `{"event":"exited","name":...,"code":...,"signal":...}` when a process ends, `{"event":"restarted",...}`
// once its replacement listens, `{"event":"failed",...}` for a replacement that did not come up (it is tried
// again with backoff, as Kubernetes does), and each process's log lines prefixed with its name. It exits 1
// when the topology cannot start.
import { spawn, execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { connect, createServer } from "node:net";
import { clearInterval, setInterval } from "node:timers";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";
import pg from "pg";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
/** The V8 flags every service starts with: the runtime's `serverNodeFlags` (libs/runtime/src/heap.ts; tests/production.test.ts checks they match). */
const nodeFlags = ["--max-semi-space-size=16"];
const env = { ...process.env };
const print = (value) => process.stdout.write(`${JSON.stringify(value)}\n`);

env.DATABASE_URL ??= "postgres://postgres@127.0.0.1:5432/switchyard";
env.NATS_URL ??= "nats://127.0.0.1:4222";
const inferenceReplicas = env.TOPOLOGY_INFERENCE_REPLICAS ?? "2";
if (inferenceReplicas !== "1" && inferenceReplicas !== "2") {
  process.stderr.write(`TOPOLOGY_INFERENCE_REPLICAS must be 1 or 2, not ${inferenceReplicas}\n`);
  process.exit(1);
}
env.SWITCHYARD_INTERNAL_SECRET ??= randomBytes(32).toString("hex");
const generatedKey = env.SWITCHYARD_BOOTSTRAP_KEY ? undefined : `topology-${randomBytes(24).toString("hex")}`;
env.SWITCHYARD_BOOTSTRAP_KEY ??= generatedKey;
env.SWITCHYARD_DATA_DIR ??= join(root, ".switchyard", "topology");
env.DRAIN_DELAY_MS ??= "1000";
env.LOG_LEVEL ??= "info";
mkdirSync(env.SWITCHYARD_DATA_DIR, { recursive: true });
// Seals workspaces' provider keys and the access-token signing key in the database: kept beside the data so
// the next start reads what this one sealed.
if (!env.SWITCHYARD_ENCRYPTION_KEY) {
  const keyFile = join(env.SWITCHYARD_DATA_DIR, "encryption-key");
  if (!existsSync(keyFile)) writeFileSync(keyFile, randomBytes(32).toString("hex"), { mode: 0o600 });
  env.SWITCHYARD_ENCRYPTION_KEY = readFileSync(keyFile, "utf8").trim();
}

if (!env.S3_ENDPOINT && env.TOPOLOGY_START_S3 !== "false") {
  const lines = execFileSync("bash", [join(root, "scripts/s3/start-swift.sh")], { encoding: "utf8" });
  for (const [, name, value] of lines.matchAll(/^export (\w+)=(.*)$/gm)) env[name] = value;
}

// Each service makes its own schema in this database; it is made when missing.
const url = new URL(env.DATABASE_URL);
const database = url.pathname.slice(1);
const admin = new pg.Client({ connectionString: Object.assign(new URL(url), { pathname: "/postgres" }).toString() });
await admin.connect();
const exists = await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [database]);
if (exists.rowCount === 0) await admin.query(`CREATE DATABASE "${database.replace(/"/g, '""')}"`);
await admin.end();

const base = Number(env.TOPOLOGY_PORT ?? 8080);
const port = { router: base, identity: base + 1, catalog: base + 2, inference: base + 3, media: base + 4, storage: base + 5, sandbox: base + 6, router2: base + 10, inference2: base + 13, balancer: base + 20 };
const local = (p) => `http://127.0.0.1:${p}`;
const inferencePorts = inferenceReplicas === "2" ? [port.inference, port.inference2] : [port.inference];
const processes = [
  { name: "identity", entry: "services/identity/dist/main.js", env: { PORT: port.identity } },
  { name: "catalog", entry: "services/catalog/dist/main.js", env: { PORT: port.catalog } },
  { name: "storage", entry: "services/storage/dist/main.js", env: { PORT: port.storage } },
  { name: "sandbox", entry: "services/sandbox/dist/main.js", env: { PORT: port.sandbox } },
  ...inferencePorts.map((p, i) => ({ name: `inference-${i + 1}`, entry: "services/inference/dist/main.js", env: { PORT: p } })),
  { name: "media", entry: "services/media/dist/main.js", env: { PORT: port.media } },
  {
    name: "router",
    entry: "services/router/dist/main.js",
    env: { PORT: port.router, INFERENCE_URL: inferencePorts.map(local).join(",") },
  },
];
if (env.TOPOLOGY_ROUTERS === "2") processes.push({ ...processes.at(-1), name: "router-2", env: { ...processes.at(-1).env, PORT: port.router2 } });
const routers = processes.filter((p) => p.name.startsWith("router"));
const shared = {
  IDENTITY_URL: local(port.identity),
  CATALOG_URL: local(port.catalog),
  INFERENCE_URL: local(port.inference),
  MEDIA_URL: local(port.media),
  STORAGE_URL: local(port.storage),
  SANDBOX_URL: local(port.sandbox),
};

let stopping = false;
const children = new Map();
/** How long a process may take to listen before it counts as failed to start. */
const startTimeoutMs = 60_000;
/** Backoff between attempts to bring a process back, as Kubernetes' CrashLoopBackOff (capped lower). */
const restartDelayMs = (failures) => Math.min(30_000, 500 * 2 ** failures);

/** Resolves once the process answers `/healthz` on its port, whatever its log level. */
async function listening(spec, child) {
  const deadline = Date.now() + startTimeoutMs;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${spec.name} exited with ${child.exitCode ?? child.signalCode} before it listened`);
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`${spec.name} did not listen within ${startTimeoutMs} ms`);
    }
    const ok = await fetch(`${local(spec.env.PORT)}/healthz`, { signal: AbortSignal.timeout(1000) }).then((r) => r.ok, () => false);
    if (ok) return child.pid;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Brings a process back until it listens again, with backoff between failed attempts. */
function restart(spec, failures = 0) {
  if (stopping) return;
  start(spec).then(
    (pid) => print({ event: "restarted", name: spec.name, pid, url: local(spec.env.PORT), attempts: failures + 1 }),
    (error) => {
      const delayMs = restartDelayMs(failures);
      print({ event: "failed", name: spec.name, message: error.message, retryInMs: delayMs });
      setTimeout(() => restart(spec, failures + 1), delayMs);
    },
  );
}

/** Starts one process; resolves when it listens. Restarts it whenever it exits, until we stop. */
function start(spec) {
  const child = spawn(process.execPath, [...nodeFlags, spec.entry], { cwd: root, env: { ...env, ...shared, ...spec.env, PORT: String(spec.env.PORT) }, stdio: ["ignore", "pipe", "pipe"] });
  children.set(spec.name, child);
  let pending = "";
  const onData = (chunk) => {
    pending += chunk.toString("utf8");
    const lines = pending.split("\n");
    pending = lines.pop();
    for (const line of lines) process.stdout.write(`${spec.name} | ${line}\n`);
  };
  child.stdout.on("data", onData);
  child.stderr.on("data", onData);
  const started = listening(spec, child);
  child.on("exit", (code, signal) => {
    // A process that never listened is the restart loop's to retry; one that ran is replaced here.
    started.then(() => {
      if (stopping) return;
      print({ event: "exited", name: spec.name, code, signal });
      restart(spec);
    }, () => undefined);
  });
  return started;
}

/**
 * A TCP balancer in front of the routers, like a Kubernetes Service: each new connection goes to the next
 * router whose /readyz passed at the last probe (every 100 ms). A connection it cannot make fails, as a
 * Service's would; it is never moved to another router.
 */
async function startBalancer(targets, listenPort) {
  const ready = targets.map(() => false);
  const probe = setInterval(() => {
    targets.forEach((target, i) => {
      fetch(`${local(target)}/readyz`, { signal: AbortSignal.timeout(500) }).then(
        (r) => ((ready[i] = r.ok), r.body?.cancel()),
        () => (ready[i] = false),
      );
    });
  }, 100);
  let next = 0;
  const server = createServer((client) => {
    const candidates = targets.map((_, i) => (next + i) % targets.length).filter((i) => ready[i]);
    next += 1;
    const chosen = candidates[0] ?? next % targets.length;
    const upstream = connect({ host: "127.0.0.1", port: targets[chosen] });
    client.pipe(upstream).pipe(client);
    client.on("error", () => upstream.destroy());
    upstream.on("error", () => client.destroy());
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.end());
  });
  await new Promise((resolve, reject) => (server.once("error", reject), server.listen(listenPort, "127.0.0.1", resolve)));
  return () => (clearInterval(probe), server.close());
}

let stopBalancer;
/** Sends SIGTERM to the running processes of these names and waits until they exit. */
const stopNamed = (names) =>
  Promise.all(
    [...children]
      .filter(([name, c]) => names.includes(name) && c.exitCode === null && c.signalCode === null)
      .map(([, c]) => new Promise((resolve) => (c.once("exit", resolve), c.kill("SIGTERM")))),
  );

/**
 * Stops the processes in the reverse of the start order: the routers, so that no request comes in; then
 * the others, which give their spend holds up to identity as they go; identity last.
 */
async function stopAll(code = 0) {
  stopping = true;
  stopBalancer?.();
  const names = processes.map((p) => p.name);
  const routerNames = routers.map((p) => p.name);
  await stopNamed(routerNames);
  await stopNamed(names.filter((name) => name !== "identity" && !routerNames.includes(name)));
  await stopNamed(["identity"]);
  print({ event: "stopped", code });
  process.exit(code);
}
process.on("SIGINT", () => stopAll(0));
process.on("SIGTERM", () => stopAll(0));

try {
  // Identity first: the others ask it for keys and holds. Then everything but the router, then the router.
  await start(processes[0]);
  await Promise.all(processes.slice(1).filter((p) => !routers.includes(p)).map(start));
  await Promise.all(routers.map(start));
  if (routers.length > 1) stopBalancer = await startBalancer(routers.map((r) => r.env.PORT), port.balancer);
} catch (error) {
  process.stderr.write(`${error.message}\n`);
  await stopAll(1);
}
print({
  event: "ready",
  api: `${local(routers.length > 1 ? port.balancer : port.router)}/api/v1`,
  // A key this script made is shown once; one you gave is yours already.
  ...(generatedKey ? { bootstrap_key: generatedKey } : {}),
  processes: processes.map((p) => ({ name: p.name, url: local(p.env.PORT), pid: children.get(p.name).pid })),
});
