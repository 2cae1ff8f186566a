import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "vitest";
import { catalogEnv } from "./catalog-fixture.js";
import { eventually } from "./eventually.js";
import { startFakeProvider, type FakeProvider } from "./fake-provider.js";
import { freePort, startProcess, type TestProcess } from "./process.js";
import { startRoundRobin, type RoundRobin } from "./round-robin.js";
import { spendCatalog } from "./spend-fixture.js";
import type { SpendDriver } from "./spend-scenarios.js";

export interface SpendTopologyOptions {
  /** The NATS every process uses. */
  natsUrl: string;
  /** A Postgres database every process shares; undefined gives each process an embedded PGlite of its own. */
  databaseUrl: string | undefined;
  /** The catalog, served by the fake provider at the given base URL; the spend catalog when not given. */
  catalog?: (baseUrl: string) => object;
  /** More environment for identity and for each inference replica (by index). */
  env?: { identity?: Record<string, string>; replicas?: Array<Record<string, string>> };
}

export interface SpendTopology {
  /** The router's API base, `.../api/v1`. */
  apiUrl: string;
  /** The prefix of every wire subject, stream and consumer of this topology. */
  namespace: string;
  /** A management key. */
  bootstrapKey: string;
  driver: SpendDriver;
  /** The provider every model of the spend catalog is served by. */
  upstream: FakeProvider;
  /** The two inference replicas, in the order the round robin in front of them knows them. */
  replicas: TestProcess[];
  /** Their ports, which name them as owners of spend holds. */
  replicaPorts: number[];
  /** The secret that signs the processes' calls to each other, for a test that calls a `/internal/...` route. */
  internalSecret: string;
  /**
   * Starts a replica that has exited again, with the same port, environment and data folder; it takes the
   * place of the old one in `replicas`.
   */
  restartReplica(index: number): Promise<void>;
  /**
   * Stops the router, then the round robin, then the other processes with SIGTERM, and removes what the
   * topology made. Returns the exit codes: router, replicas, catalog, identity.
   */
  stop(): Promise<Array<number | null>>;
}

const startupMs = 60_000;
const inferenceEntry = "services/inference/dist/main.js";
/** Long enough for four processes to start on two cores, each creating its embedded database. */
export const spendTopologyStartupMs = 2 * startupMs;

/** Counts the chat completions a replica has served so far (its debug log has a line for each). */
export const chatsServed = (replica: TestProcess) =>
  replica.output().split("\n").filter((line) => line.includes('"url":"/api/v1/chat/completions"')).length;

/**
 * A `SpendDriver` call to a router at `apiUrl`: the status, and the JSON body (a stream's frames are not one
 * JSON document: its status is what the tests read of it).
 */
export async function routerCall(apiUrl: string, method: string, path: string, body: unknown, key: string): ReturnType<SpendDriver["call"]> {
  const res = await fetch(`${apiUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text.startsWith("{") ? (JSON.parse(text) as Awaited<ReturnType<SpendDriver["call"]>>["body"]) : {} };
}

/**
 * Router, identity, catalog and two inference replicas as separate processes over NATS, the replicas behind
 * a round robin, all with one namespace of their own, so topologies can share a NATS server.
 */
export async function startSpendTopology(options: SpendTopologyOptions): Promise<SpendTopology> {
  const bootstrapKey = `spend-mp-bootstrap-${randomBytes(16).toString("hex")}`;
  const namespace = `spmp${randomBytes(4).toString("hex")}`;
  const [identityPort, catalogPort, routerPort, ...inferencePorts] = [await freePort(), await freePort(), await freePort(), await freePort(), await freePort()];
  const dataDir = await mkdtemp(join(tmpdir(), "switchyard-spend-mp-"));
  const internalSecret = randomBytes(32).toString("hex");
  let upstream: FakeProvider | undefined;
  let identity: TestProcess | undefined;
  let catalog: TestProcess | undefined;
  const replicas: TestProcess[] = [];
  const replicaEnvs: Array<Record<string, string>> = [];
  let balancer: RoundRobin | undefined;
  let router: TestProcess | undefined;

  const stop = async () => {
    const routerCode = await router?.stop();
    await balancer?.stop();
    const others = await Promise.all([...replicas.map((r) => r.stop()), catalog?.stop(), identity?.stop()]);
    await upstream?.stop();
    await rm(dataDir, { recursive: true, force: true });
    return [routerCode, ...others].map((code) => code ?? null);
  };

  try {
    upstream = await startFakeProvider("alpha");
    const catalogFile = await catalogEnv((options.catalog ?? spendCatalog)(upstream.baseUrl));
    const common = {
      SWITCHYARD_INTERNAL_SECRET: internalSecret,
      NATS_URL: options.natsUrl,
      NATS_NAMESPACE: namespace,
      SWITCHYARD_DATA_DIR: dataDir,
      LOG_LEVEL: "info",
      ...(options.databaseUrl ? { DATABASE_URL: options.databaseUrl } : {}),
    };
    const identityUrl = `http://127.0.0.1:${identityPort}`;
    const catalogUrl = `http://127.0.0.1:${catalogPort}`;
    identity = startProcess("services/identity/dist/main.js", { ...common, PORT: String(identityPort), SWITCHYARD_BOOTSTRAP_KEY: bootstrapKey, ...options.env?.identity });
    // The round robin in front of the replicas only connects when called: catalog asks it for endpoint statistics.
    balancer = await startRoundRobin(inferencePorts);
    catalog = startProcess("services/catalog/dist/main.js", { ...common, ...catalogFile, PORT: String(catalogPort), IDENTITY_URL: identityUrl, INFERENCE_URL: balancer.url });
    for (const [i, port] of inferencePorts.entries()) {
      replicaEnvs.push({
        ...common,
        ...catalogFile,
        // Embedded PGlite is one process's alone: without Postgres each replica keeps its generations apart.
        SWITCHYARD_DATA_DIR: join(dataDir, `replica-${i}`),
        // Debug level logs every completed request, which tells which replica served what.
        LOG_LEVEL: "debug",
        PORT: String(port),
        CATALOG_URL: catalogUrl,
        IDENTITY_URL: identityUrl,
        ...options.env?.replicas?.[i],
      });
      replicas.push(startProcess(inferenceEntry, replicaEnvs[i]!));
    }
    // None needs another to start. Started together, since each embedded PGlite takes seconds to create.
    await Promise.all([
      identity.waitFor(/identity listening/, startupMs),
      catalog.waitFor(/catalog listening/, startupMs),
      ...replicas.map((r) => r.waitFor(/inference listening/, startupMs)),
    ]);
    router = startProcess("services/router/dist/main.js", {
      ...common,
      PORT: String(routerPort),
      IDENTITY_URL: identityUrl,
      CATALOG_URL: catalogUrl,
      INFERENCE_URL: balancer.url,
    });
    await router.waitFor(/router listening/, startupMs);
  } catch (error) {
    // A failed start leaves nothing behind.
    await stop();
    throw error;
  }

  const apiUrl = `http://127.0.0.1:${routerPort}/api/v1`;
  const fake = upstream;

  /** Runs `burst`, then checks that the replicas served its `count` chat requests between them, each some. */
  async function acrossReplicas<T>(count: number, burst: () => Promise<T>): Promise<T> {
    const before = replicas.map(chatsServed);
    const result = await burst();
    const served = () => replicas.map((r, i) => chatsServed(r) - before[i]!);
    // A replica logs a request once its response has closed, which may be just after the client has it.
    await eventually(async () => served().reduce((a, b) => a + b) === count, 5000);
    for (const n of served()) expect(n).toBeGreaterThan(0);
    return result;
  }

  const driver: SpendDriver = {
    call: (method, path, body, key = bootstrapKey) => routerCall(apiUrl, method, path, body, key),
    upstreamCalls: (model) => fake.requests.filter((r) => r.body.model === model).length,
    // Usage travels inference → NATS → identity's ledger consumer, so it is polled for, generously.
    usageWithinMs: 10_000,
    burst: acrossReplicas,
  };

  async function restartReplica(index: number): Promise<void> {
    const old = replicas[index]!;
    if (old.child.exitCode === null && old.child.signalCode === null) throw new Error(`replica ${index} is still running`);
    replicas[index] = startProcess(inferenceEntry, replicaEnvs[index]!);
    await replicas[index].waitFor(/inference listening/, startupMs);
  }

  return { apiUrl, namespace, bootstrapKey, driver, upstream: fake, replicas, replicaPorts: inferencePorts, internalSecret, restartReplica, stop };
}
