import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { serverNodeFlags } from "@switchyard/runtime";
import type { CompareTargetName } from "./config.js";
import { benchConfig } from "./config.js";
import type { ChatEndpoint } from "./chat-load.js";
import { forkChild } from "./measure.js";

/** A gateway (or the upstream itself) under measurement: where it takes requests and which processes are its. */
export interface Target extends ChatEndpoint {
  name: CompareTargetName;
  /** The processes whose CPU time and memory count as this target's (read again at every measurement slot). */
  pids(): number[];
  /** Starts a CPU profile of what follows (where the target supports it and BENCH_CPU_PROF_DIR is set). */
  startProfile?(): Promise<void>;
  /** Stops the profile started last and writes it under BENCH_CPU_PROF_DIR, named after `label`; returns where. */
  stopProfile?(label: string): Promise<string>;
  /** The JS heap in use of a target that runs in one Node process the benchmark forked, in bytes. */
  heapUsed?(): Promise<number>;
  /** Stops every process of the target; safe to call twice. */
  stop(): Promise<void>;
}

/**
 * The environment for a process the benchmark starts: the benchmark's own, less what would point the
 * process elsewhere than the benchmark decides (databases, buses, object storage, ports, preloads), and
 * the run's own settings (a baseline checkout's older code may not know every target or plan).
 */
export function childEnv(extra: Record<string, string>): Record<string, string | undefined> {
  const dropped = /^(DATABASE_URL|NATS_|S3_|SWITCHYARD_|TOPOLOGY_|HOST$|PORT$|NODE_OPTIONS$|RATE_LIMIT_|BENCH_SIGNAL_PROFILE_DIR$|BENCH_TARGETS$|BENCH_CHAT_PLANS$|BENCH_BASELINE_DIR$)/;
  const env = Object.fromEntries(Object.entries(benchConfig.baseEnv).filter(([key]) => !dropped.test(key)));
  return { ...env, LOG_LEVEL: benchConfig.logLevel, ...extra };
}

/** The fake upstream (chat completions, Anthropic's Messages and embeddings) in its own process. */
export async function startUpstream() {
  const child = forkChild<{ url: string }>(childEnv({}), "./upstream-child.js");
  try {
    const { url } = await child.ready;
    return { url, pid: child.pid, stop: () => child.stop() };
  } catch (error) {
    await child.stop();
    throw error;
  }
}

/** The model Switchyard's chat and Responses plans call: the upstream on chat completions (adapter `openai-compatible`). */
export const chatModel = "bench/model";
/** The model Switchyard's Messages plans call: the upstream on Anthropic's `/messages` (adapter `anthropic`), which gets the client's body as sent. */
export const messagesModel = "bench/anthropic";
/** The model Switchyard's embeddings plans call: the upstream on `/embeddings` through the `openai-compatible` provider. */
export const embeddingModel = "bench/embedding";

/** Where Switchyard (standalone or the topology, behind its router) takes each dialect, and on which model. */
export const switchyardRoutes: ChatEndpoint["routes"] = {
  chat: { path: "/api/v1/chat/completions", model: chatModel },
  responses: { path: "/api/v1/responses", model: chatModel },
  messages: { path: "/api/v1/messages", model: messagesModel },
  embeddings: { path: "/api/v1/embeddings", model: embeddingModel },
};

/**
 * The catalog of the benchmark: three models served by the upstream at `upstreamUrl` (no API key).
 * `bench/model` through an `openai-compatible` provider and `bench/anthropic` through an `anthropic` one, at
 * the same prices; `bench/embedding`, an embedding model of text-embedding-3-small's price ($0.02 per million
 * tokens) and input limits, through the `openai-compatible` provider.
 */
export async function writeCatalog(dir: string, upstreamUrl: string): Promise<string> {
  const path = join(dir, "catalog.json");
  const pricing = { prompt: "0.000001", completion: "0.000002" };
  const embedding = {
    id: embeddingModel,
    name: "Bench Embedding",
    context_length: 8192,
    input_modalities: ["text"],
    output_modalities: ["embeddings"],
    endpoints: [{ provider: "bench", upstream_model: "bench", max_inputs: 2048, pricing: { prompt: "0.00000002", completion: "0" } }],
  };
  await writeFile(
    path,
    JSON.stringify({
      providers: [
        { slug: "bench", name: "Bench", adapter: "openai-compatible", base_url: upstreamUrl, requires_api_key: false },
        { slug: "bench-anthropic", name: "Bench Anthropic", adapter: "anthropic", base_url: upstreamUrl, requires_api_key: false },
      ],
      models: [
        { id: chatModel, name: "Bench", context_length: 8000, endpoints: [{ provider: "bench", upstream_model: "bench", pricing }] },
        { id: messagesModel, name: "Bench Anthropic", context_length: 8000, endpoints: [{ provider: "bench-anthropic", upstream_model: "bench", pricing }] },
        embedding,
      ],
    }),
  );
  return path;
}

/** An inference (non-management) key made with the management key, as a client would use. */
export async function createInferenceKey(origin: string, managementKey: string): Promise<string> {
  const res = await fetch(`${origin}/api/v1/keys`, {
    method: "POST",
    headers: { authorization: `Bearer ${managementKey}`, "content-type": "application/json" },
    body: JSON.stringify({ name: "bench" }),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`POST /api/v1/keys answered ${res.status}: ${text}`);
  return (JSON.parse(text) as { key: string }).key;
}

/** The calls straight to the upstream: the baseline every gateway is compared with, on chat completions, Anthropic's Messages and embeddings. */
export function directTarget(upstream: { url: string; pid: number }): Target {
  const url = new URL(upstream.url);
  return {
    name: "direct",
    origin: url.origin,
    headers: { authorization: "Bearer sk-bench" },
    routes: {
      chat: { path: `${url.pathname}/chat/completions`, model: "bench" },
      messages: { path: `${url.pathname}/messages`, model: "bench" },
      embeddings: { path: `${url.pathname}/embeddings`, model: "bench" },
    },
    pids: () => [upstream.pid],
    stop: async () => undefined, // the upstream outlives the targets: it is stopped last
  };
}

/** The bare proxy in front of the upstream (`proxy-child.ts`), called as direct calls are. */
export async function startProxyTarget(upstream: { url: string }): Promise<Target> {
  const child = forkChild<{ port: number }>(childEnv({ BENCH_PROXY_UPSTREAM: upstream.url }), "./proxy-child.js");
  try {
    const { port } = await child.ready;
    const direct = directTarget({ url: upstream.url, pid: child.pid });
    return { ...direct, name: "proxy", origin: `http://127.0.0.1:${port}`, stop: () => child.stop() };
  } catch (error) {
    await child.stop();
    throw error;
  }
}

/**
 * Switchyard standalone in a child process: on its embedded defaults (PGlite, in-process bus, disk), or with
 * `database` on that Postgres database (`standalone-pg`; the database's own work then shows as backend CPU).
 * `baseline` runs another checkout's build the same way, from its own gateway child (`baselineChild`).
 */
export async function startStandaloneTarget(
  catalogPath: string,
  dataDir: string,
  options: { database?: { url: string; drop(): Promise<void> }; baseline?: string } = {},
): Promise<Target> {
  const { database, baseline } = options;
  const name = baseline ? "baseline" : database ? "standalone-pg" : "standalone";
  const profileDir = benchConfig.cpuProfileDir;
  if (profileDir) await mkdir(profileDir, { recursive: true });
  const gateway = forkChild<{ routerPort: number; bootstrapKey: string }>(
    childEnv({ SWITCHYARD_CONFIG: catalogPath, SWITCHYARD_DATA_DIR: dataDir, ...(database ? { DATABASE_URL: database.url } : {}) }),
    baseline ? pathToFileURL(baseline).href : undefined,
    serverNodeFlags,
  );
  const stop = async () => {
    await gateway.stop();
    await database?.drop();
  };
  try {
    const ready = await gateway.ready;
    const origin = `http://127.0.0.1:${ready.routerPort}`;
    const key = await createInferenceKey(origin, ready.bootstrapKey);
    return {
      name,
      origin,
      headers: { authorization: `Bearer ${key}` },
      routes: switchyardRoutes,
      pids: () => [gateway.pid],
      startProfile: async () => void (await gateway.startProfile()),
      stopProfile: async (label) => (await gateway.stopProfile(join(profileDir ?? ".", `${name}-${label}.cpuprofile`))).profiled,
      heapUsed: async () => (await gateway.usage()).heapUsed ?? 0,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
