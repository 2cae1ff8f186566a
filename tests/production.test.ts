import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { serverNodeFlags } from "@switchyard/runtime";
import { Agent, fetch } from "undici";
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
 * routers behind a balancer that behaves as a Kubernetes Service (new connections to ready routers only,
 * a refused connection fails), two inference replicas behind each router. The topology restarts a process
 * that exits, as Kubernetes would; the tests send SIGTERM or SIGKILL to processes by pid under load.
 */
type Event = {
  event: string;
  name?: string;
  pid?: number;
  url?: string;
  code?: number | null;
  signal?: string | null;
  processes?: Array<{ name: string; url: string; pid: number }>;
};

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
  // The topology takes base … base + 20 (its own balancer, unused here, on base + 20).
  const base = await freePortBlock(21);
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
  await clientPool.close();
  await db?.end();
  if (topology && topology.exitCode === null) {
    const exited = new Promise((resolve) => topology.once("exit", resolve));
    topology.kill("SIGTERM");
    await exited;
    // Stopped in the reverse of the start order, the replicas still reach identity to give up their holds.
    expect(output).not.toMatch(/could not (detach|release)/);
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
 * The clients' connections: like a balancer in front of the routers (the draining rule of docs/operations.md), they drop
 * an idle keep-alive connection sooner than DRAIN_DELAY_MS, so none is reused as a draining router closes it.
 */
const clientPool = new Agent({ keepAliveTimeout: 500, keepAliveMaxTimeout: 500 });

/** A failed fetch as its message and its cause's code, e.g. `fetch failed UND_ERR_SOCKET`. */
const failure = (error: unknown) => `${(error as Error).message} ${String((error as { cause?: { code?: string } }).cause?.code)}`;

/** One completion, sent once: whatever the client sees (a connection error included) is its answer. */
async function send(key: string): Promise<{ status: number; text: string; generationId: string | null; error?: string }> {
  try {
    const res = await fetch(`${apiUrl}/chat/completions`, {
      dispatcher: clientPool,
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "spend/cent", messages: [{ role: "user", content: "hi" }] }),
    });
    return { status: res.status, text: await res.text(), generationId: res.headers.get("x-generation-id") };
  } catch (error) {
    return { status: 0, text: "", generationId: null, error: failure(error) };
  }
}

/** A streamed completion read to its end: `[DONE]`, an in-band error frame, or a failure to connect or read. */
async function stream(key: string, model: string): Promise<{ outcome: string; generationId: string | null }> {
  try {
    const res = await fetch(`${apiUrl}/chat/completions`, {
      dispatcher: clientPool,
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model, stream: true, messages: [{ role: "user", content: "hi" }] }),
    });
    const text = await res.text();
    const generationId = res.headers.get("x-generation-id");
    if (res.status !== 200) return { outcome: `status ${res.status}`, generationId };
    if (text.includes("data: [DONE]")) return { outcome: "done", generationId };
    if (/"finish_reason":"error"/.test(text)) return { outcome: "in-band error", generationId };
    return { outcome: "cut", generationId };
  } catch (error) {
    return { outcome: `connection error: ${failure(error)}`, generationId: null };
  }
}

const usageOf = async (hash: string) => {
  // Polled in a loop: slowly, so the management key stays under its rate limit.
  await new Promise((resolve) => setTimeout(resolve, 200));
  const answer = await call(apiUrl, "GET", `/keys/${hash}`);
  if (answer.status !== 200) throw new Error(`GET /keys/${hash} answered ${answer.status}: ${JSON.stringify(answer.body)}`);
  return Number((answer.body.data as { usage: number }).usage);
};
const generationIds = async (hash: string) => (await db.query("SELECT id FROM inference.generations WHERE key_hash = $1 ORDER BY id", [hash])).rows.map((r: { id: string }) => r.id);
const ledgerOf = async (hash: string) =>
  (await db.query("SELECT generation_id, cost::text AS cost FROM identity.ledger WHERE key_hash = $1 ORDER BY generation_id", [hash])).rows as Array<{ generation_id: string; cost: string }>;
/** Every hold row of the key, expired or not: settled and released holds are deleted, so a row left is a hold not settled. */
const holdsOf = async (hash: string) =>
  (await db.query("SELECT generation_id, expires_at <= now() AS expired FROM identity.holds WHERE key_hash = $1 ORDER BY generation_id", [hash])).rows as Array<{ generation_id: string; expired: boolean }>;
const sorted = (ids: Array<string | null>) => ids.map(String).sort();

/**
 * Exactly the generations clients were told of (their X-Generation-Id) are recorded, each charged once at
 * $0.01 in the ledger, and the key's usage is their sum; then no hold of the key is left. Read together
 * once records and charges have settled.
 */
async function chargedExactly(hash: string, ids: Array<string | null>) {
  const expected = sorted(ids);
  let figures = {};
  await eventually(async () => {
    const generations = await generationIds(hash);
    const ledger = await ledgerOf(hash);
    const usage = await usageOf(hash);
    figures = { expected: expected.length, generations: generations.length, ledger: ledger.length, usage };
    return (
      JSON.stringify(generations) === JSON.stringify(expected) &&
      JSON.stringify(ledger.map((l) => l.generation_id)) === JSON.stringify(expected) &&
      ledger.every((l) => Number(l.cost) === 0.01) &&
      Math.abs(usage - expected.length * 0.01) < 1e-9
    );
  }, 30_000).catch(() => {
    throw new Error(`charges did not settle to exactly one per answered request: ${JSON.stringify(figures)}`);
  });
}

const upstreamCallsSince = (start: number, models: string[]) => upstream.requests.slice(start).filter((r) => models.includes(String(r.body.model))).length;

const newKey = async (body: Record<string, unknown> = {}) => {
  const created = await call(apiUrl, "POST", "/keys", { name: "production", ...body });
  expect(created.status).toBe(201);
  return { key: String(created.body.key), hash: String((created.body.data as { hash: string }).hash) };
};

describe.skipIf(needsBackends)("the multi-process topology", () => {
  it("starts every service with the V8 flags of a server", async () => {
    expect(pids.size).toBeGreaterThanOrEqual(7);
    for (const [name, pid] of pids) {
      const args = (await readFile(`/proc/${pid}/cmdline`, "utf8")).split("\0").slice(1, -2);
      expect(args, name).toEqual(serverNodeFlags);
    }
  });

  it("restarts every process in turn under load without a connection error or a 502, and applies usage exactly once", async () => {
    const { key, hash } = await newKey({ limit: 100, rate_limit_per_minute: 1_000_000 });
    const upstreamStart = upstream.requests.length;
    let running = true;
    let phase = "start";
    const answers: Array<{ outcome: string; generationId: string | null }> = [];
    const streams: Array<Promise<{ outcome: string; generationId: string | null }>> = [];
    // A bounded load: four clients in a loop, and a new stream every 300 ms, until the restarts are done.
    const clients = Array.from({ length: 4 }, async () => {
      for (let sent = 0; running && sent < 2000; sent += 1) {
        const answer = await send(key);
        const outcome = answer.status === 200 ? "200" : answer.error ? `connection error during ${phase}: ${answer.error}` : `${answer.status} during ${phase}: ${answer.text.slice(0, 200)}`;
        answers.push({ outcome, generationId: answer.generationId });
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    });
    const streamer = (async () => {
      while (running) {
        const started = phase;
        streams.push(stream(key, "spend/slow").then((s) => (s.outcome === "done" ? s : { ...s, outcome: `${s.outcome} (started during ${started}, ended during ${phase})` })));
        await new Promise((resolve) => setTimeout(resolve, 300));
      }
    })();

    const names = ["inference-1", "inference-2", "identity", "catalog", "storage", "media", "sandbox", "router", "router-2"];
    const exits: Array<{ name: string; code: number | null | undefined; signal: string | null | undefined }> = [];
    for (const name of names) {
      const before = pids.get(name)!;
      const restarted = events.length;
      phase = name;
      process.kill(before, "SIGTERM");
      // Each process drains and exits 0 on SIGTERM.
      await waitForEvent((e) => e.event === "exited" && e.name === name && events.indexOf(e) >= restarted);
      const exited = events.find((e) => e.event === "exited" && e.name === name && events.indexOf(e) >= restarted)!;
      exits.push({ name, code: exited.code, signal: exited.signal });
      await waitForEvent((e) => e.event === "restarted" && e.name === name && events.indexOf(e) >= restarted);
      // Balancers (the router's replica checks, the test's) notice the new process is ready.
      await eventually(async () => (await fetch(`${urls.get(name)}/readyz`).catch(() => undefined))?.status === 200, 20_000);
      await new Promise((resolve) => setTimeout(resolve, 700));
    }
    running = false;
    await Promise.all([...clients, streamer]);
    const streamed = await Promise.all(streams);

    expect(exits).toEqual(names.map((name) => ({ name, code: 0, signal: null })));
    expect(answers.length).toBeGreaterThan(50);
    // No client saw a connection error, a 502 or a 503: each was sent once, and each was answered.
    const problems = output.split("\n").filter((l) => /unhandled|"level":[45]0/.test(l) && !l.includes("sandbox |")).join("\n").slice(-5000);
    expect(answers.map((a) => a.outcome).filter((o) => o !== "200"), problems).toEqual([]);
    expect(streamed.length).toBeGreaterThan(10);
    // A draining process finishes its streams: none is cut, none ends in an error.
    expect(streamed.map((s) => s.outcome).filter((o) => o !== "done"), problems).toEqual([]);

    // Exactly the generations clients got are recorded and charged once ($0.01 each), streams included,
    // and the provider was called once for each.
    const ids = [...answers.map((a) => a.generationId), ...streamed.map((s) => s.generationId)];
    expect(ids.every((id) => typeof id === "string" && id.length > 0)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    await chargedExactly(hash, ids);
    expect(upstreamCallsSince(upstreamStart, ["cent", "slow"])).toBe(ids.length);
    // No hold is left behind, expired or not, once the load has settled.
    expect(await holdsOf(hash)).toEqual([]);
  }, 240_000);

  it("ends the streams of an inference replica killed with SIGKILL in-band, frees their holds, and keeps serving", async () => {
    const { key, hash } = await newKey({ limit: 100 });
    const upstreamStart = upstream.requests.length;
    const victim = pids.get("inference-1")!;
    const streams = Array.from({ length: 6 }, () => stream(key, "spend/drip"));
    // The drip streams have sent their first words and wait; then one replica dies.
    await eventually(async () => (await holdsOf(hash)).length === 6, 10_000);
    await new Promise((resolve) => setTimeout(resolve, 500));
    process.kill(victim, "SIGKILL");
    const outcomes = await Promise.all(streams);
    const killed = outcomes.filter((o) => o.outcome === "in-band error").map((o) => o.generationId);
    const finished = outcomes.filter((o) => o.outcome === "done").map((o) => o.generationId);
    expect(killed.length).toBeGreaterThan(0);
    expect(finished.length).toBeGreaterThan(0);
    expect(killed.length + finished.length).toBe(6);
    await waitForEvent((e) => e.event === "exited" && e.name === "inference-1" && e.signal === "SIGKILL");

    // Every connection the router sends to the dead replica is refused and sent to the survivor.
    const after = await Promise.all(
      Array.from({ length: 6 }, async () => {
        const res = await fetch(`${apiUrl}/chat/completions`, {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: JSON.stringify({ model: "spend/cent", messages: [{ role: "user", content: "hi" }] }),
        });
        await res.text();
        return { status: res.status, generationId: res.headers.get("x-generation-id") };
      }),
    );
    expect(after.map((a) => a.status)).toEqual(Array(6).fill(200));

    // What was served is charged exactly; the killed generations are neither recorded nor charged (the
    // provider did that work for nothing), and their holds are freed, never expired: by the replica when it
    // starts again (its previous run's holds) or by identity when their lease lapses (SPEND_HOLD_LEASE_MS).
    await chargedExactly(hash, [...finished, ...after.map((a) => a.generationId)]);
    expect(upstreamCallsSince(upstreamStart, ["drip"])).toBe(6);
    expect(upstreamCallsSince(upstreamStart, ["cent"])).toBe(6);
    await eventually(async () => (await holdsOf(hash)).length === 0, 30_000);
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
      const { key, hash } = await spendHelpers(driver()).newKey({ rate_limit_per_minute: 10 });
      const leased = async () =>
        (await db.query<{ n: number }>("SELECT coalesce(sum(count), 0)::int AS n FROM router.rate_windows WHERE key_hash = $1", [hash])).rows[0]!.n;
      // Routers admit from slices of the minute's allowance they lease from Postgres, so requests taken in
      // turns, however fast, are counted exactly: a router that used its slice leases the next one.
      // The twenty requests must fall in one minute: when less than 15 s of this one are left, wait for the next.
      if (Date.now() % 60_000 > 45_000) await new Promise((resolve) => setTimeout(resolve, 61_000 - (Date.now() % 60_000)));
      const statuses: number[] = [];
      for (let i = 0; i < 20; i += 1) statuses.push((await call(`${routerUrls[i % 2]}/api/v1`, "GET", "/key", undefined, key)).status);
      expect(await leased()).toBe(10);
      expect(statuses.filter((s) => s === 200)).toHaveLength(10);
      expect(statuses.filter((s) => s === 429)).toHaveLength(10);
    }, 60_000);
  });
});

