import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testEnv } from "./support/config.js";
import { eventually } from "./support/eventually.js";
import { startFaultProxy, type FaultProxy } from "./support/fault-proxy.js";
import { startTestNats, type TestNats } from "./support/nats.js";
import { createTestDatabase, type TestDatabase } from "./support/postgres.js";
import { freePort, startProcess, type TestProcess } from "./support/process.js";

/**
 * Three router processes sharing rate limits through Postgres, as a user meets them: a key's limit holds
 * across replicas within 10%, and a Postgres outage costs 503s with Retry-After, never a 500 or a crash.
 * The routers reach Postgres through a proxy this test cuts; identity reaches it directly.
 */
const bootstrapKey = `rl-bootstrap-${randomBytes(16).toString("hex")}`;
let nats: TestNats;
let database: TestDatabase;
let proxy: FaultProxy;
let dataDir: string;
let identity: TestProcess;
const routers: TestProcess[] = [];
const apiUrls: string[] = [];

beforeAll(async () => {
  nats = await startTestNats();
  database = await createTestDatabase();
  dataDir = await mkdtemp(join(tmpdir(), "switchyard-rl-"));
  const dbUrl = new URL(database.url!);
  proxy = await startFaultProxy({ host: dbUrl.hostname, port: Number(dbUrl.port || 5432) });
  const viaProxy = new URL(database.url!);
  viaProxy.host = `127.0.0.1:${proxy.port}`;
  const [identityPort, ...routerPorts] = await Promise.all(Array.from({ length: 4 }, () => freePort()));
  const common = {
    SWITCHYARD_INTERNAL_SECRET: randomBytes(32).toString("hex"),
    NATS_URL: nats.url,
    NATS_NAMESPACE: `rl${randomBytes(4).toString("hex")}`,
    SWITCHYARD_DATA_DIR: dataDir,
    LOG_LEVEL: "info",
    IDENTITY_URL: `http://127.0.0.1:${identityPort}`,
  };
  identity = startProcess("services/identity/dist/main.js", { ...common, DATABASE_URL: database.url!, PORT: String(identityPort), SWITCHYARD_BOOTSTRAP_KEY: bootstrapKey });
  await identity.waitFor(/identity listening/, 45_000);
  for (const port of routerPorts) {
    routers.push(startProcess("services/router/dist/main.js", { ...common, DATABASE_URL: viaProxy.toString(), RATE_LIMIT_STORE: "postgres", PORT: String(port) }));
    apiUrls.push(`http://127.0.0.1:${port}/api/v1`);
  }
  await Promise.all(routers.map((r) => r.waitFor(/router listening/, 45_000)));
}, 120_000);

afterAll(async () => {
  const codes = await Promise.all([...routers.map((r) => r.stop()), identity?.stop()]);
  await proxy?.stop();
  await nats?.stop();
  await database?.drop();
  await rm(dataDir, { recursive: true, force: true });
  expect(codes).toEqual([0, 0, 0, 0]); // every process was still running and drained cleanly
});

async function newKey(perMinute: number): Promise<string> {
  const res = await fetch(`${apiUrls[0]}/keys`, {
    method: "POST",
    headers: { authorization: `Bearer ${bootstrapKey}`, "content-type": "application/json" },
    body: JSON.stringify({ name: `rl-${perMinute}`, rate_limit_per_minute: perMinute }),
  });
  expect(res.status).toBe(201);
  return String(((await res.json()) as { key: string }).key);
}

async function getKey(apiUrl: string, key: string) {
  const res = await fetch(`${apiUrl}/key`, { headers: { authorization: `Bearer ${key}` } });
  const body = (await res.json()) as { error?: { code: number; message: string } };
  return { status: res.status, retryAfter: res.headers.get("retry-after"), body };
}

const minuteOf = (t: number) => Math.floor(t / 60_000);

describe.skipIf(!testEnv.databaseUrl)("rate limits across router processes", () => {
  it("admits 60 to 66 of a key's 60 a minute when three routers take 180 requests at once", async () => {
    const key = await newKey(60);
    // The burst must fall in one minute: when less than 20 s of this one are left, wait for the next.
    if (Date.now() % 60_000 > 40_000) await new Promise((r) => setTimeout(r, 61_000 - (Date.now() % 60_000)));
    const started = Date.now();
    // Every router has seen the key before the burst: each decides on its own from then on.
    for (const url of apiUrls) expect((await getKey(url, key)).status).toBe(200);
    const answers = await Promise.all(apiUrls.flatMap((url) => Array.from({ length: 59 }, () => getKey(url, key))));
    expect(minuteOf(Date.now()), "the burst crossed a minute").toBe(minuteOf(started));
    const admitted = apiUrls.length + answers.filter((a) => a.status === 200).length;
    expect(admitted).toBeGreaterThanOrEqual(60);
    expect(admitted).toBeLessThanOrEqual(66);
    for (const refused of answers.filter((a) => a.status !== 200)) {
      expect(refused.status).toBe(429);
      expect(Number(refused.retryAfter)).toBeGreaterThanOrEqual(1);
    }
  }, 120_000);

  it("answers 503 with Retry-After, never 500, while Postgres is out of reach, and admits again once it is back", async () => {
    const key = await newKey(60);
    const unseen = await newKey(60);
    // Each router leases its first slice of the key's minute.
    for (const url of apiUrls) expect((await getKey(url, key)).status).toBe(200);
    await proxy.cut();
    try {
      // A key's first request of the minute needs a slice at once.
      for (const url of apiUrls) {
        const first = await getKey(url, unseen);
        expect(first.status).toBe(503);
        expect(Number(first.retryAfter)).toBeGreaterThanOrEqual(1);
      }
      for (const url of apiUrls) {
        const statuses: number[] = [];
        for (let i = 0; i < 15; i++) {
          const answer = await getKey(url, key);
          statuses.push(answer.status);
          if (answer.status === 503) {
            expect(answer.body.error).toMatchObject({ code: 503, message: "Rate limiting is temporarily unavailable" });
            expect(Number(answer.retryAfter)).toBeGreaterThanOrEqual(1);
          }
        }
        // What the router still holds of its slice is admitted; every request that needs a new slice gets 503.
        expect(new Set(statuses)).toEqual(new Set([200, 503]));
        expect(statuses.lastIndexOf(200)).toBeLessThan(statuses.indexOf(503));
      }
      for (const r of routers) expect(r.child.exitCode).toBeNull();
    } finally {
      await proxy.restore();
    }
    for (const url of apiUrls) await eventually(async () => (await getKey(url, key)).status === 200, 15_000);
  }, 120_000);
});
