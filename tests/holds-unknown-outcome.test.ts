import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect, createServer, type AddressInfo, type Server, type Socket } from "node:net";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { testEnv } from "./support/config.js";
import { eventually } from "./support/eventually.js";
import { createTestDatabase, type TestDatabase } from "./support/postgres.js";
import { freePort, startProcess, type TestProcess } from "./support/process.js";
import { spendCatalog } from "./support/spend-fixture.js";
import { startFakeProvider, type FakeProvider } from "./support/fake-provider.js";
import { startTestNats, type TestNats } from "./support/nats.js";
import { spendHelpers, type SpendDriver } from "./support/spend-scenarios.js";
import { routerCall } from "./support/spend-topology.js";

/**
 * A hold call whose answer never arrives may still have written the hold. Router, identity, catalog and
 * inference run as processes; inference reaches identity through a proxy that can hold identity's answers
 * back longer than inference waits for them (5 s). The request gets 503 and reaches no provider, and the
 * hold it may have left must not go on counting against the key.
 */

interface LatencyProxy {
  url: string;
  /** Holds back what the target sends for `ms` (0: passes it on at once). */
  delay(ms: number): void;
  stop(): Promise<void>;
}

/** A TCP proxy on 127.0.0.1 whose answers from `target` can be delayed: a service slow to answer, though it did the work. */
async function startLatencyProxy(target: { host: string; port: number }): Promise<LatencyProxy> {
  let delayMs = 0;
  const open = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(target);
    for (const socket of [client, upstream]) {
      open.add(socket);
      socket.once("close", () => open.delete(socket));
    }
    client.on("error", () => upstream.destroy());
    upstream.on("error", () => client.destroy());
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
    client.pipe(upstream);
    // Chunks keep their order: each waits for the chunk before it as well as for the delay.
    let last = Promise.resolve();
    upstream.on("data", (chunk: Buffer) => {
      const wait = delayMs;
      last = last.then(() => (wait > 0 ? new Promise((resolve) => setTimeout(resolve, wait)) : undefined)).then(() => void (client.destroyed || client.write(chunk)));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    delay: (ms) => void (delayMs = ms),
    async stop() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of open) socket.destroy();
      await closed;
    },
  };
}

let nats: TestNats;
let database: TestDatabase;
let proxy: LatencyProxy;
let alpha: FakeProvider;
let dataDir: string;
const processes: TestProcess[] = [];
let h: ReturnType<typeof spendHelpers>;
let driver: SpendDriver;
let apiUrl: string;

/** Starts a service's built entry point and waits until it listens. */
async function start(name: string, env: Record<string, string>): Promise<void> {
  const proc = startProcess(`services/${name}/dist/main.js`, env);
  processes.push(proc);
  await proc.waitFor(new RegExp(`${name} listening`), 60_000);
}

/** The holds identity keeps for a key, read from its table. */
async function holdsOf(keyHash: string): Promise<number> {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM identity.holds WHERE key_hash = $1`, [keyHash]);
    return rows[0]!.n;
  } finally {
    await client.end();
  }
}

// Identity's holds are read from its table: only a Postgres server is shared by processes.
describe.skipIf(!testEnv.databaseUrl)("a hold call whose outcome is unknown", () => {
  beforeAll(async () => {
    nats = await startTestNats();
    database = await createTestDatabase();
    alpha = await startFakeProvider("alpha");
    dataDir = await mkdtemp(join(tmpdir(), "switchyard-holds-"));
    const [identityPort, catalogPort, inferencePort, routerPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
    proxy = await startLatencyProxy({ host: "127.0.0.1", port: identityPort });
    const url = (port: number) => `http://127.0.0.1:${port}`;
    const bootstrapKey = `holds-bootstrap-${randomBytes(16).toString("hex")}`;
    const common = {
      SWITCHYARD_INTERNAL_SECRET: randomBytes(32).toString("hex"),
      NATS_URL: nats.url,
      NATS_NAMESPACE: `holds${randomBytes(4).toString("hex")}`,
      SWITCHYARD_DATA_DIR: dataDir,
      DATABASE_URL: database.url!,
      LOG_LEVEL: "info",
      IDENTITY_URL: url(identityPort),
      CATALOG_URL: url(catalogPort),
      INFERENCE_URL: url(inferencePort),
      ...(await catalogEnv(spendCatalog(alpha.baseUrl))),
    };
    await start("identity", { ...common, PORT: String(identityPort), SWITCHYARD_BOOTSTRAP_KEY: bootstrapKey });
    await start("catalog", { ...common, PORT: String(catalogPort) });
    // Only inference reaches identity through the proxy: the router looks keys up directly.
    await start("inference", { ...common, PORT: String(inferencePort), IDENTITY_URL: proxy.url });
    await start("router", { ...common, PORT: String(routerPort) });
    apiUrl = `${url(routerPort)}/api/v1`;
    driver = {
      call: (method, path, body, key = bootstrapKey) => routerCall(apiUrl, method, path, body, key),
      upstreamCalls: (model) => alpha.requests.filter((r) => r.body.model === model).length,
      usageWithinMs: 10_000,
      burst: (_count, run) => run(),
    };
    h = spendHelpers(driver);
  }, 180_000);

  afterAll(async () => {
    proxy?.delay(0);
    // The router first, identity last: the others give their holds up to it as they stop.
    for (const proc of [...processes].reverse()) await proc.stop();
    await proxy?.stop();
    await alpha?.stop();
    await nats?.stop();
    await database?.drop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it.each([
    ["a chat completion", false],
    ["a streamed chat completion", true],
  ])("leaves no hold behind for %s refused because its hold could not be checked, so the key's next request is served", async (_what, stream) => {
    // A cent and a half: one cent-request fits, and only while no other hold counts against the key.
    const { key, hash } = await h.newKey({ limit: 0.015 });
    const before = driver.upstreamCalls("cent");
    proxy.delay(6000);
    let refused: { status: number; text: string };
    try {
      const res = await fetch(`${apiUrl}/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "spend/cent", messages: [{ role: "user", content: "Say hello" }], stream }),
      });
      refused = { status: res.status, text: await res.text() };
    } finally {
      proxy.delay(0);
    }
    // A stream has sent its first keep-alive comment by then: the refusal is its one error frame.
    expect(refused.status).toBe(stream ? 200 : 503);
    expect(refused.text).toMatch(/Spend limits cannot be checked right now/);
    expect(driver.upstreamCalls("cent")).toBe(before);

    await eventually(async () => (await holdsOf(hash)) === 0, 15_000);
    expect((await h.keyRecord(hash)).limit_remaining).toBe(0.015);
    const next = await h.chat(key, "spend/cent", { stream });
    expect(next.status).toBe(200);
  }, 60_000);
});
