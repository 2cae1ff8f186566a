import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { eventually } from "./support/eventually.js";
import { startFakeProvider, type FakeProvider } from "./support/fake-provider.js";
import { startTestNats } from "./support/nats.js";
import { testObjectStoreEnv } from "./support/object-store.js";
import { createTestDatabase, type TestDatabase } from "./support/postgres.js";
import { freePortBlock, repoRoot } from "./support/process.js";
import { startRoundRobin, type RoundRobin } from "./support/round-robin.js";
import { spendCatalog } from "./support/spend-fixture.js";
import { guardrailBudgetUnderConcurrency, keyLimitUnderConcurrency, spendHelpers, type SpendDriver } from "./support/spend-scenarios.js";
import { testEnv } from "./support/config.js";

/**
 * `npm run topology` as a cluster in miniature: every service its own process on Postgres and NATS, two
 * routers behind a balancer, two inference replicas behind each router. The topology restarts a process
 * that exits, as Kubernetes would; the tests send SIGTERM or SIGKILL to processes by pid under load.
 */
type Event = { event: string; name?: string; pid?: number; url?: string; processes?: Array<{ name: string; url: string; pid: number }> };

let database: TestDatabase;
let nats: Awaited<ReturnType<typeof startTestNats>>;
let upstream: FakeProvider;
let dataDir: string;
let topology: ChildProcess;
let balancer: RoundRobin;
let apiUrl: string;
let routerUrls: string[];
let db: pg.Client;
const events: Event[] = [];
/** What the topology and its processes printed, for failures. */
let output = "";
const pids = new Map<string, number>();
const urls = new Map<string, string>();
const bootstrapKey = `production-test-${randomBytes(16).toString("hex")}`;
const namespace = `prod${randomBytes(4).toString("hex")}`;

const waitForEvent = (match: (e: Event) => boolean, timeoutMs = 60_000) => eventually(async () => events.some(match), timeoutMs);

const needsBackends = !testEnv.databaseUrl || !testEnv.natsUrl;

beforeAll(async () => {
  if (needsBackends) return;
  database = await createTestDatabase();
  nats = await startTestNats();
  upstream = await startFakeProvider("alpha");
  dataDir = await mkdtemp(join(tmpdir(), "switchyard-prod-"));
  const catalog = spendCatalog(upstream.baseUrl);
  catalog.models.push(
    ...[
      ["spend/slow", "slow"],
      ["spend/drip", "drip"],
    ].map(([id, upstreamModel]) => ({ id: id!, name: id!, context_length: 8000, endpoints: [{ provider: "alpha", upstream_model: upstreamModel!, pricing: { prompt: "0", completion: "0", request: "0.01" } }] })),
  );
  // The topology takes base … base + 13.
  const base = await freePortBlock(14);
  topology = spawn(process.execPath, ["scripts/topology.mjs"], {
    cwd: repoRoot,
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      PATH: testEnv.path,
      ...(await catalogEnv(catalog)),
      ...testObjectStoreEnv(),
      TOPOLOGY_START_S3: "false",
      TOPOLOGY_PORT: String(base),
      TOPOLOGY_ROUTERS: "2",
      DATABASE_URL: database.url!,
      NATS_URL: nats.url,
      NATS_NAMESPACE: namespace,
      SWITCHYARD_DATA_DIR: dataDir,
      SWITCHYARD_BOOTSTRAP_KEY: bootstrapKey,
      SANDBOX_DIR: join(tmpdir(), `switchyard-prod-sandboxes-${namespace}`),
      LOG_LEVEL: "warn",
      DRAIN_DELAY_MS: "1000",
      DRAIN_TIMEOUT_MS: "15000",
      // Short, so that the hold of a generation whose replica was killed expires within the test.
      REQUEST_TIMEOUT_MS: "8000",
      SPEND_HOLD_GRACE_MS: "1000",
    },
  });
  let pending = "";
  topology.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  topology.stdout!.on("data", (chunk: Buffer) => {
    pending += chunk.toString("utf8");
    const lines = pending.split("\n");
    pending = lines.pop()!;
    for (const line of lines) {
      output += `${line}\n`;
      if (!line.startsWith("{")) continue;
      const event = JSON.parse(line) as Event;
      events.push(event);
      for (const p of event.processes ?? []) {
        pids.set(p.name, p.pid);
        urls.set(p.name, p.url);
      }
      if (event.event === "restarted") pids.set(event.name!, event.pid!);
    }
  });
  await waitForEvent((e) => e.event === "ready" || e.event === "stopped", 100_000).catch((error: unknown) => {
    throw new Error(`${(error as Error).message}; the topology printed:\n${output.slice(-4000)}`);
  });
  expect(events.at(-1)!.event, output.slice(-4000)).toBe("ready");
  routerUrls = [urls.get("router")!, urls.get("router-2")!];
  balancer = await startRoundRobin(routerUrls.map((u) => Number(new URL(u).port)), { readyPath: "/readyz" });
  apiUrl = `${balancer.url}/api/v1`;
  db = new pg.Client({ connectionString: database.url });
  await db.connect();
}, 120_000);

afterAll(async () => {
  if (needsBackends) return;
  await db?.end();
  if (topology && topology.exitCode === null) {
    const exited = new Promise((resolve) => topology.once("exit", resolve));
    topology.kill("SIGTERM");
    await exited;
  }
  await balancer?.stop();
  await upstream?.stop();
  await nats?.stop();
  await database?.drop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
  await rm(join(tmpdir(), `switchyard-prod-sandboxes-${namespace}`), { recursive: true, force: true });
}, 60_000);

const call = async (base: string, method: string, path: string, body?: unknown, key = bootstrapKey) => {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : {}) as Record<string, unknown> & { error?: { message: string } } };
};

/**
 * One completion, sent as the official SDKs send it: a connection that drops before any answer (a
 * keep-alive connection the server closed just as the request left) is tried once more on a new one.
 */
let resent = 0;
async function send(key: string): Promise<{ status: number; text: string; error?: string }> {
  for (let attempt = 0; ; attempt += 1) {
    try {
      const res = await fetch(`${apiUrl}/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "spend/cent", messages: [{ role: "user", content: "hi" }] }),
      });
      return { status: res.status, text: await res.text() };
    } catch (error) {
      const code = String((error as { cause?: { code?: string } }).cause?.code);
      if (attempt === 0 && ["UND_ERR_SOCKET", "ECONNRESET"].includes(code)) {
        resent += 1;
        continue;
      }
      return { status: 0, text: "", error: `${(error as Error).message} ${code}` };
    }
  }
}

/** A streamed completion read to its end: `[DONE]`, an in-band error frame, or a failure to connect or read. */
async function stream(key: string, model: string) {
  try {
    const res = await fetch(`${apiUrl}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model, stream: true, messages: [{ role: "user", content: "hi" }] }),
    });
    const text = await res.text();
    if (res.status !== 200) return `status ${res.status}`;
    if (text.includes("data: [DONE]")) return "done";
    if (/"finish_reason":"error"/.test(text)) return "in-band error";
    return "cut";
  } catch (error) {
    return `connection error: ${(error as Error).message}`;
  }
}

const usageOf = async (hash: string) => {
  // Polled in a loop: slowly, so the management key stays under its rate limit.
  await new Promise((resolve) => setTimeout(resolve, 200));
  const answer = await call(apiUrl, "GET", `/keys/${hash}`);
  if (answer.status !== 200) throw new Error(`GET /keys/${hash} answered ${answer.status}: ${JSON.stringify(answer.body)}`);
  return Number((answer.body.data as { usage: number }).usage);
};
const generationsOf = async (hash: string) => Number((await db.query("SELECT count(*)::int AS n FROM inference.generations WHERE key_hash = $1", [hash])).rows[0].n);
const activeHolds = async (hash: string) => Number((await db.query("SELECT count(*)::int AS n FROM identity.holds WHERE key_hash = $1 AND expires_at > now()", [hash])).rows[0].n);
const ledgerRows = async (hash: string) => (await db.query("SELECT count(*)::int AS n, count(DISTINCT generation_id)::int AS d FROM identity.ledger WHERE key_hash = $1", [hash])).rows[0] as { n: number; d: number };

/**
 * Generation records, ledger rows and the key's usage agree: one ledger row per generation and $0.01 of
 * usage each, read together once records and charges have settled.
 */
async function chargedOnce(hash: string, atLeast: number) {
  let figures = {};
  await eventually(async () => {
    const generations = await generationsOf(hash);
    const ledger = await ledgerRows(hash);
    const usage = await usageOf(hash);
    figures = { generations, ledger, usage };
    return generations >= atLeast && ledger.n === generations && ledger.d === generations && Math.abs(usage - generations * 0.01) < 1e-9;
  }, 30_000).catch(() => {
    throw new Error(`charges did not settle to one per generation: ${JSON.stringify(figures)}`);
  });
  await eventually(async () => (await activeHolds(hash)) === 0, 15_000);
}

const newKey = async (body: Record<string, unknown> = {}) => {
  const created = await call(apiUrl, "POST", "/keys", { name: "production", ...body });
  expect(created.status).toBe(201);
  return { key: String(created.body.key), hash: String((created.body.data as { hash: string }).hash) };
};

describe.skipIf(needsBackends)("the many-process topology", () => {
  it("restarts every process in turn under load without a connection error or a 502, and applies usage once", async () => {
    const { key, hash } = await newKey({ limit: 100, rate_limit_per_minute: 1_000_000 });
    let running = true;
    let phase = "start";
    const answers: string[] = [];
    const streams: Array<Promise<string>> = [];
    // A bounded load: four clients in a loop, and a new stream every 300 ms, until the restarts are done.
    const clients = Array.from({ length: 4 }, async () => {
      for (let sent = 0; running && sent < 2000; sent += 1) {
        const answer = await send(key);
        answers.push(answer.status === 200 ? "200" : answer.error ? `connection error during ${phase}: ${answer.error}` : `${answer.status} ${answer.text.slice(0, 200)}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    });
    const streamer = (async () => {
      while (running) {
        streams.push(stream(key, "spend/slow"));
        await new Promise((resolve) => setTimeout(resolve, 300));
      }
    })();

    for (const name of ["inference-1", "inference-2", "identity", "catalog", "storage", "media", "sandbox", "router", "router-2"]) {
      const before = pids.get(name)!;
      const restarted = events.length;
      phase = name;
      process.kill(before, "SIGTERM");
      await waitForEvent((e) => e.event === "restarted" && e.name === name && events.indexOf(e) >= restarted);
      // Balancers (the router's replica checks, the test's) notice the new process is ready.
      await eventually(async () => (await fetch(`${urls.get(name)}/readyz`).catch(() => undefined))?.status === 200, 20_000);
      await new Promise((resolve) => setTimeout(resolve, 700));
    }
    running = false;
    await Promise.all([...clients, streamer]);
    const streamed = await Promise.all(streams);

    expect(answers.length).toBeGreaterThan(50);
    expect(answers.filter((a) => a !== "200"), output.split("\n").filter((l) => /unhandled|"level":[45]0/.test(l) && !l.includes("sandbox |")).join("\n").slice(-5000)).toEqual([]);
    // Resent connections are the keep-alive race every HTTP server has when it closes; they stay rare.
    expect(resent).toBeLessThan(answers.length / 100 + 3);
    expect(streamed.length).toBeGreaterThan(10);
    expect(streamed.filter((s) => s !== "done" && s !== "in-band error")).toEqual([]);

    // Every generation is charged once ($0.01 each), and no hold outlives its request.
    await chargedOnce(hash, answers.length);
  }, 240_000);

  it("ends the streams of an inference replica killed with SIGKILL in-band, expires their holds, and keeps serving", async () => {
    const { key, hash } = await newKey({ limit: 100 });
    const victim = pids.get("inference-1")!;
    const streams = Array.from({ length: 6 }, () => stream(key, "spend/drip"));
    // The drip streams have sent their first words and wait; then one replica dies.
    await eventually(async () => (await activeHolds(hash)) === 6, 10_000);
    await new Promise((resolve) => setTimeout(resolve, 500));
    process.kill(victim, "SIGKILL");
    const outcomes = await Promise.all(streams);
    expect(outcomes.filter((o) => o === "in-band error").length).toBeGreaterThan(0);
    expect(outcomes.filter((o) => o === "done").length).toBeGreaterThan(0);
    expect(outcomes.filter((o) => o !== "done" && o !== "in-band error")).toEqual([]);

    // The router stops sending to the dead replica within its readiness interval; the other one serves.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const after = await Promise.all(Array.from({ length: 6 }, () => call(apiUrl, "POST", "/chat/completions", { model: "spend/cent", messages: [{ role: "user", content: "hi" }] }, key)));
    expect(after.map((a) => a.status)).toEqual(Array(6).fill(200));

    // What the survivor served is charged; the killed generations' holds expire (request deadline + grace).
    await eventually(async () => (await activeHolds(hash)) === 0, 20_000);
    await chargedOnce(hash, 6);
    await waitForEvent((e) => e.event === "restarted" && e.name === "inference-1" && e.pid !== victim);
  }, 120_000);

  describe("limits across two routers and two inference replicas", () => {
    /** Management calls and chats alternate between the two routers. */
    let turn = 0;
    const driver = (): SpendDriver => ({
      call: (method, path, body, key) => call(`${routerUrls[turn++ % 2]}/api/v1`, method, path, body, key),
      upstreamCalls: (model) => upstream.requests.filter((r) => r.body.model === model).length,
      usageWithinMs: 20_000,
      burst: (_count, run) => run(),
    });

    it("holds a key's limit under 50 concurrent requests", () => keyLimitUnderConcurrency(driver()), 60_000);
    it("holds a guardrail budget shared by two keys", () => guardrailBudgetUnderConcurrency(driver()), 60_000);

    it("counts a key's rate limit across both routers", async () => {
      const { key } = await spendHelpers(driver()).newKey({ rate_limit_per_minute: 10 });
      const statuses: number[] = [];
      for (let i = 0; i < 20; i += 1) {
        statuses.push((await call(`${routerUrls[i % 2]}/api/v1`, "GET", "/key", undefined, key)).status);
        // Router replicas exchange their counts every 100 ms; spaced requests make the count exact.
        await new Promise((resolve) => setTimeout(resolve, 150));
      }
      expect(statuses.filter((s) => s === 200)).toHaveLength(10);
      expect(statuses.filter((s) => s === 429)).toHaveLength(10);
    }, 30_000);
  });
});

