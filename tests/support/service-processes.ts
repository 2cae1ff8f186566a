import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTestNats, type TestNats } from "./nats.js";
import { createTestDatabase } from "./postgres.js";
import { freePort, startProcess, type TestProcess } from "./process.js";

/** The services this helper can start; the router is always started last, in front of the others. */
export type ServiceName = "identity" | "catalog" | "inference" | "media";

export interface ServiceProcesses {
  /** The router's `/api/v1`. */
  apiUrl: string;
  bootstrapKey: string;
  /** Base URL of each process, the router's included. */
  urls: Record<ServiceName | "router", string>;
  processes: Partial<Record<ServiceName | "router", TestProcess>>;
  /** A second catalog replica on the same database and bus, which the router does not call (`secondCatalog`). */
  secondCatalog?: TestProcess;
  /** SIGTERM to every process (router first), then the backends; resolves with each process's exit code. */
  stop(): Promise<Record<string, number | null>>;
}

/**
 * Identity, the chosen services and a router, each its own process on NATS and Postgres (or PGlite), as in
 * a cluster: for what only shows across processes (each process's metrics, request ids in each one's logs).
 */
export async function startServiceProcesses(
  services: readonly ServiceName[],
  env: Record<string, string> = {},
  /**
   * A NATS of the test's own (it may be down, for outage tests), stopped with the processes; a second catalog
   * replica; the router's own variables over the others'.
   */
  options: { nats?: TestNats; secondCatalog?: boolean; routerEnv?: Record<string, string> } = {},
): Promise<ServiceProcesses> {
  const nats = options.nats ?? (await startTestNats());
  const database = await createTestDatabase();
  const dataDir = await mkdtemp(join(tmpdir(), "switchyard-procs-"));
  const bootstrapKey = `processes-bootstrap-${randomBytes(16).toString("hex")}`;
  const names = ["identity", ...services.filter((s) => s !== "identity"), "router"] as const;
  const ports = Object.fromEntries(await Promise.all(names.map(async (name) => [name, await freePort()] as const))) as Record<ServiceName | "router", number>;
  const urls = Object.fromEntries(Object.entries(ports).map(([name, port]) => [name, `http://127.0.0.1:${port}`])) as ServiceProcesses["urls"];
  const common = {
    SWITCHYARD_INTERNAL_SECRET: randomBytes(32).toString("hex"),
    NATS_URL: nats.url,
    NATS_NAMESPACE: `procs${randomBytes(4).toString("hex")}`,
    SWITCHYARD_DATA_DIR: dataDir,
    LOG_LEVEL: "info",
    IDENTITY_URL: urls.identity,
    ...(urls.catalog ? { CATALOG_URL: urls.catalog } : {}),
    ...(urls.inference ? { INFERENCE_URL: urls.inference } : {}),
    ...(urls.media ? { MEDIA_URL: urls.media } : {}),
    ...(database.url ? { DATABASE_URL: database.url } : {}),
    ...env,
  };
  const processes: ServiceProcesses["processes"] = {};
  let secondCatalog: TestProcess | undefined;
  const start = (name: ServiceName | "router", extra: Record<string, string> = {}) => {
    const proc = startProcess(`services/${name}/dist/main.js`, { ...common, ...extra, PORT: String(ports[name]) });
    processes[name] = proc;
    return proc.waitFor(new RegExp(`${name} listening`), 45_000);
  };
  const stop: ServiceProcesses["stop"] = async () => {
    const codes: Record<string, number | null> = {};
    if (processes.router) codes.router = await processes.router.stop();
    await Promise.all(names.filter((n) => n !== "router" && processes[n]).map(async (n) => (codes[n] = await processes[n]!.stop())));
    if (secondCatalog) codes.secondCatalog = await secondCatalog.stop();
    await nats.stop();
    await database.drop();
    await rm(dataDir, { recursive: true, force: true });
    return codes;
  };
  try {
    await start("identity", { SWITCHYARD_BOOTSTRAP_KEY: bootstrapKey });
    await Promise.all(services.filter((s) => s !== "identity").map((s) => start(s)));
    if (options.secondCatalog) {
      secondCatalog = startProcess("services/catalog/dist/main.js", { ...common, PORT: String(await freePort()) });
      await secondCatalog.waitFor(/catalog listening/, 45_000);
    }
    await start("router", options.routerEnv);
  } catch (error) {
    await stop();
    throw error;
  }
  return { apiUrl: `${urls.router}/api/v1`, bootstrapKey, urls, processes, ...(secondCatalog ? { secondCatalog } : {}), stop };
}
