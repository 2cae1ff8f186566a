import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { eventually } from "./support/eventually.js";
import { startFakeProvider, type FakeProvider } from "./support/fake-provider.js";
import { startTestNats } from "./support/nats.js";
import { createTestDatabase, type TestDatabase } from "./support/postgres.js";
import { freePort, startProcess, type TestProcess } from "./support/process.js";
import { startRoundRobin, type RoundRobin } from "./support/round-robin.js";
import { spendCatalog } from "./support/spend-fixture.js";
import { guardrailBudgetUnderConcurrency, keyLimitUnderConcurrency, type SpendDriver } from "./support/spend-scenarios.js";

/** Spend limits with router, identity, catalog and two inference replicas as separate processes over NATS. */
const bootstrapKey = `spend-mp-bootstrap-${randomBytes(16).toString("hex")}`;
let nats: Awaited<ReturnType<typeof startTestNats>>;
let database: TestDatabase;
let dataDir: string;
let alpha: FakeProvider;
let identity: TestProcess;
let catalog: TestProcess;
let replicas: TestProcess[] = [];
let balancer: RoundRobin;
let router: TestProcess;
let apiUrl: string;
const startupMs = 60_000;

beforeAll(async () => {
  nats = await startTestNats();
  database = await createTestDatabase();
  dataDir = await mkdtemp(join(tmpdir(), "switchyard-spend-mp-"));
  alpha = await startFakeProvider("alpha");
  const catalogFile = await catalogEnv(spendCatalog(alpha.baseUrl));
  const [identityPort, catalogPort, routerPort, ...inferencePorts] = [await freePort(), await freePort(), await freePort(), await freePort(), await freePort()];
  const common = {
    SWITCHYARD_INTERNAL_SECRET: randomBytes(32).toString("hex"),
    NATS_URL: nats.url,
    NATS_NAMESPACE: `spmp${randomBytes(4).toString("hex")}`,
    SWITCHYARD_DATA_DIR: dataDir,
    LOG_LEVEL: "info",
    ...(database.url ? { DATABASE_URL: database.url } : {}),
  };
  const identityUrl = `http://127.0.0.1:${identityPort}`;
  const catalogUrl = `http://127.0.0.1:${catalogPort}`;
  identity = startProcess("services/identity/dist/main.js", { ...common, PORT: String(identityPort), SWITCHYARD_BOOTSTRAP_KEY: bootstrapKey });
  catalog = startProcess("services/catalog/dist/main.js", { ...common, ...catalogFile, PORT: String(catalogPort), IDENTITY_URL: identityUrl });
  replicas = inferencePorts.map((port, i) =>
    startProcess("services/inference/dist/main.js", {
      ...common,
      ...catalogFile,
      // Embedded PGlite is one process's alone: without Postgres each replica keeps its generations apart.
      SWITCHYARD_DATA_DIR: join(dataDir, `replica-${i}`),
      // Debug level logs every completed request, which tells which replica served what.
      LOG_LEVEL: "debug",
      PORT: String(port),
      CATALOG_URL: catalogUrl,
      IDENTITY_URL: identityUrl,
    }),
  );
  // None needs another to start. Started together, since each embedded PGlite takes seconds to create.
  await Promise.all([
    identity.waitFor(/identity listening/, startupMs),
    catalog.waitFor(/catalog listening/, startupMs),
    ...replicas.map((r) => r.waitFor(/inference listening/, startupMs)),
  ]);
  balancer = await startRoundRobin(inferencePorts);
  router = startProcess("services/router/dist/main.js", {
    ...common,
    PORT: String(routerPort),
    IDENTITY_URL: identityUrl,
    CATALOG_URL: catalogUrl,
    INFERENCE_URL: balancer.url,
  });
  await router.waitFor(/router listening/, startupMs);
  apiUrl = `http://127.0.0.1:${routerPort}/api/v1`;
}, 2 * startupMs);

afterAll(async () => {
  const routerCode = await router?.stop();
  await balancer?.stop();
  const codes = [routerCode, ...(await Promise.all([...replicas.map((r) => r.stop()), catalog?.stop(), identity?.stop()]))];
  await alpha?.stop();
  await nats?.stop();
  await database?.drop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
  // Checked after cleaning up, so a failed start leaves no NATS server or database behind.
  expect(codes).toEqual([0, 0, 0, 0, 0]); // every process drained cleanly on SIGTERM
});

const driver: SpendDriver = {
  async call(method, path, body, key = bootstrapKey) {
    const res = await fetch(`${apiUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : {} };
  },
  upstreamCalls: (model) => alpha.requests.filter((r) => r.body.model === model).length,
  // Usage travels inference → NATS → identity's ledger consumer, so it is polled for, generously.
  usageWithinMs: 10_000,
  burst: acrossReplicas,
};
const chatsServed = (replica: TestProcess) => replica.output().split("\n").filter((line) => line.includes('"url":"/api/v1/chat/completions"')).length;

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

describe("spend limits with two inference replicas behind the router", () => {
  it("lets exactly the remaining budget's worth of 50 concurrent requests through, whichever replica serves them", () => keyLimitUnderConcurrency(driver));
  it("shares one guardrail budget between two keys under 50 concurrent requests spread over both replicas", () => guardrailBudgetUnderConcurrency(driver));
});
