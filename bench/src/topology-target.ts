import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { connect } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect as connectNats } from "@nats-io/transport-node";
import { benchConfig } from "./config.js";
import { freePortBlock } from "./free-port.js";
import { signalProfileEnv, startSignalProfiles, stopSignalProfiles } from "./signal-profile.js";
import { freshDatabase } from "./database.js";
import { childEnv, createInferenceKey, switchyardRoutes, type Target } from "./targets.js";

const repoRoot = fileURLToPath(new URL("../../", import.meta.url));
const bootstrapKey = `bench-topology-${randomBytes(24).toString("hex")}`;

const readCmdline = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
  } catch {
    return undefined; // gone
  }
};

/** Why the topology cannot run here (Postgres or NATS unreachable), or undefined. */
export type Skip = { skipped: string };

/** The NATS server answers its INFO line within a few seconds. */
function natsAnswers(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port || 4222), hostname);
    const done = (ok: boolean) => (socket.destroy(), resolve(ok));
    socket.setTimeout(3000, () => done(false));
    socket.once("data", (data: Buffer) => done(data.toString("utf8").startsWith("INFO")));
    socket.once("error", () => done(false));
  });
}

/** Removes the JetStream streams the topology made under its namespace (`<namespace>_<DOMAIN>`), leaving the server as it was. */
async function deleteStreams(url: string, namespace: string) {
  const nc = await connectNats({ servers: url, name: "switchyard-bench" });
  try {
    const jsm = await jetstreamManager(nc);
    const names: string[] = [];
    for await (const stream of jsm.streams.list()) if (stream.config.name.startsWith(`${namespace}_`)) names.push(stream.config.name);
    for (const name of names) await jsm.streams.delete(name);
  } finally {
    await nc.close();
  }
}

interface TopologyEvent {
  event: string;
  name?: string;
  pid?: number;
  processes?: Array<{ name: string; url: string; pid: number }>;
}

const parseEvent = (line: string): TopologyEvent | undefined => {
  try {
    return JSON.parse(line) as TopologyEvent;
  } catch {
    return undefined; // a line that only looks like an event
  }
};

/**
 * Switchyard as separate processes: `scripts/topology.mjs` (identity, catalog, storage, sandbox, media,
 * inference (one process, or two with BENCH_TOPOLOGY_INFERENCE_REPLICAS=2), router) on a fresh Postgres
 * database and NATS under a namespace of its own, files on disk.
 * Its pids are the script's and every process it reports (a restarted process's new pid replaces the old).
 */
export async function startTopologyTarget(catalogPath: string, dataDir: string): Promise<Target | Skip> {
  const { databaseUrl, natsUrl } = benchConfig.compare;
  let database: Awaited<ReturnType<typeof freshDatabase>>;
  try {
    database = await freshDatabase(databaseUrl);
  } catch (error) {
    return { skipped: `Postgres at ${new URL(databaseUrl).host} is unreachable (${error instanceof Error ? error.message : String(error)})` };
  }
  if (!(await natsAnswers(natsUrl))) {
    await database.drop().catch((error: unknown) => console.error(`could not drop the benchmark's database: ${String(error)}`));
    return { skipped: `NATS at ${new URL(natsUrl).host} is unreachable` };
  }

  const namespace = `bench_${randomBytes(4).toString("hex")}`;
  const port = await freePortBlock(14);
  const profileDir = benchConfig.cpuProfileDir ? join(benchConfig.cpuProfileDir, "topology") : undefined;
  let profiledPids: number[] = [];
  if (profileDir) await mkdir(profileDir, { recursive: true });
  const child = spawn(process.execPath, ["scripts/topology.mjs"], {
    cwd: repoRoot,
    env: childEnv({
      TOPOLOGY_START_S3: "false",
      TOPOLOGY_PORT: String(port),
      DATABASE_URL: database.url,
      NATS_URL: natsUrl,
      NATS_NAMESPACE: namespace,
      SWITCHYARD_DATA_DIR: dataDir,
      SWITCHYARD_BOOTSTRAP_KEY: bootstrapKey,
      SWITCHYARD_CONFIG: catalogPath,
      RATE_LIMIT_PER_MINUTE: "100000000",
      TOPOLOGY_INFERENCE_REPLICAS: String(benchConfig.compare.topologyInferenceReplicas),
      ...(profileDir ? signalProfileEnv(profileDir) : {}),
    }),
    stdio: ["ignore", "pipe", "pipe"],
  });
  const pids = new Map<string, number>();
  const restarts: string[] = [];
  let output = "";
  let printed = 0;
  let onReady: (event: TopologyEvent) => void = () => undefined;
  let pending = "";
  const onLine = (line: string) => {
    const event = line.startsWith("{") ? parseEvent(line) : undefined;
    if (event) {
      if (event.event === "ready") onReady(event);
      if (event.event === "restarted" && event.name && event.pid) {
        restarts.push(event.name);
        pids.set(event.name, event.pid);
      }
      if (event.event === "ready" || event.event === "stopped") return;
    }
    output = `${output}${line}\n`.slice(-8000);
    // Processes log at warn: what they print is worth seeing, within reason.
    if (printed++ < 40) process.stderr.write(`[topology] ${line}\n`);
  };
  const onData = (chunk: Buffer) => {
    pending += chunk.toString("utf8");
    const lines = pending.split("\n");
    pending = lines.pop() ?? "";
    lines.forEach(onLine);
  };
  child.stdout.on("data", onData);
  child.stderr.on("data", onData);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));

  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM"); // the script stops its processes, then itself
      const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
      await exited;
      clearTimeout(timer);
    }
    // A process the script could not stop (it was killed itself) is stopped here, by its pid, if that pid
    // is still one of the services it started (not a new process that got the number since).
    for (const pid of pids.values()) {
      const cmdline = readCmdline(pid);
      if (!cmdline?.includes("/dist/main.js")) continue;
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // gone meanwhile
      }
    }
    await database.drop();
    await deleteStreams(natsUrl, namespace);
    if (restarts.length) console.log(`topology: processes restarted during the run: ${restarts.join(", ")}`);
  };

  try {
    const ready = await new Promise<TopologyEvent>((resolve, reject) => {
      onReady = resolve;
      child.once("exit", (code, signal) => reject(new Error(`scripts/topology.mjs exited with ${code ?? signal} before it was ready`)));
      setTimeout(() => reject(new Error("scripts/topology.mjs was not ready within 180 s")), 180_000).unref();
    });
    for (const p of ready.processes ?? []) pids.set(p.name, p.pid);
    const origin = `http://127.0.0.1:${port}`;
    const key = await createInferenceKey(origin, bootstrapKey);
    const all = () => [...(child.pid ? [child.pid] : []), ...pids.values()];
    return {
      name: "topology",
      origin,
      headers: { authorization: `Bearer ${key}` },
      routes: switchyardRoutes,
      pids: all,
      ...(profileDir && {
        startProfile: async () => startSignalProfiles((profiledPids = all())),
        stopProfile: (label: string) => stopSignalProfiles(profileDir, profiledPids, label),
      }),
      stop,
    };
  } catch (error) {
    await stop();
    throw new Error(`topology: ${error instanceof Error ? error.message : String(error)}\n${output}`, { cause: error });
  }
}
