import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createServiceSigner, createServiceVerifier, migrate, openDatabase, serviceHeader, silentLogger, type Db, type HttpError } from "@switchyard/runtime";
import type { SandboxExecRequest } from "@switchyard/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../tests/support/postgres.js";
import { createApp } from "./app.js";
import { loadSandboxConfig } from "./config.js";
import type { SandboxDeps, SyncReport } from "./deps.js";
import { execute } from "./exec.js";
import { replicaLock } from "./lock.js";
import { migrations, schema } from "./migrations.js";
import { startReaper } from "./reaper.js";
import { directRunner } from "./runners/direct.js";
import { offRunner } from "./runners/index.js";
import { startSandbox } from "./start.js";

let database: TestDatabase;
let db: Db;
let dir: string;
const organization_id = "00000000-0000-4000-8000-000000000001";
const workspace_id = "00000000-0000-4000-8000-000000000002";
const secret = "sandbox-exec-test-secret-0123456789abcdef";
const reports: Array<{ id: string; body: SyncReport }> = [];

beforeAll(async () => {
  database = await createTestDatabase();
  db = await openDatabase({ url: database.url });
  await migrate(db, schema, migrations);
  dir = await mkdtemp(join(tmpdir(), "sy-exec-"));
});
afterAll(async () => {
  await db?.close();
  await database?.drop();
  await rm(dir, { recursive: true, force: true });
});

/** One replica of the sandbox service: its own in-process lock and report memory, the shared database and trees. */
function replica(limits: Partial<SandboxDeps["limits"]> = {}): SandboxDeps {
  const config = loadSandboxConfig({ SANDBOX_DIR: dir, ...Object.fromEntries(Object.entries(limits).map(([k, v]) => [k, String(v)])) });
  return {
    db,
    runner: directRunner(dir),
    logger: silentLogger(),
    async reportFiles(id, body) {
      reports.push({ id, body });
      return body.files.length;
    },
    limits: config,
    lock: replicaLock(db, { ttlMs: 30_000, logger: silentLogger() }),
    reported: new Map(),
    verifyService: createServiceVerifier(secret),
    requestLogs: false,
    health: { draining: false },
    readiness: {},
  };
}

const request = (key: string, commands: string[], extra: Partial<SandboxExecRequest> = {}): SandboxExecRequest => ({
  organization_id,
  workspace_id,
  container: { kind: "session", key },
  commands,
  ...extra,
});

/** Processes of this machine whose command line has `marker`. */
async function processesWith(marker: string): Promise<number> {
  let found = 0;
  for (const pid of (await readdir("/proc")).filter((name) => /^\d+$/.test(name))) {
    const cmdline = await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "");
    if (cmdline.split("\0").includes(marker)) found += 1;
  }
  return found;
}

const statusOf = (promise: Promise<unknown>) =>
  promise.then(
    () => 200,
    (error: HttpError) => `${error.status} ${error.message}`,
  );

describe("sandbox calls", () => {
  it("keeps a container whose call ran longer than its idle time: idleness counts from the call's end", async () => {
    const deps = replica({ SANDBOX_IDLE_MS: 1000 });
    const reaper = startReaper(deps, 100);
    try {
      // The reaper sees it idle (its call started over a second ago) while the call still runs.
      const first = await execute(deps, request("long-call", ["sleep 1.8; echo kept > kept.txt"], { idle_ms: 1000 }));
      expect(first).toMatchObject({ started: true, results: [{ exit_code: 0 }] });
      await new Promise((resolve) => setTimeout(resolve, 400));
      const second = await execute(deps, request("long-call", ["cat kept.txt"], { idle_ms: 1000 }));
      expect(second).toMatchObject({ container_id: first.container_id, started: false, results: [{ stdout: "kept\n" }] });
      // Once idle for its time after its last call, it does go.
      await new Promise((resolve) => setTimeout(resolve, 1600));
      expect(await db.query("SELECT 1 FROM sandbox.containers WHERE id = $1 AND ended_at IS NULL", [first.container_id])).toHaveLength(0);
    } finally {
      await reaper.stop();
    }
  });

  it("runs one call at a time per container across replicas", async () => {
    const [one, two] = [replica(), replica()];
    await execute(one, request("shared", ["true"]));
    const slow = execute(one, request("shared", ["sleep 0.8; echo first >> order.txt"]));
    await new Promise((resolve) => setTimeout(resolve, 200));
    const quick = await execute(two, request("shared", ["echo second >> order.txt; cat order.txt"]));
    await slow;
    expect(quick.results[0]!.stdout).toBe("first\nsecond\n");
  });

  it("refuses a container past the workspace's limit of live ones, with a clear error", async () => {
    const workspace = "00000000-0000-4000-8000-0000000000cc";
    const deps = replica({ SANDBOX_MAX_CONTAINERS: 2 });
    const call = (key: string, extra: Partial<SandboxExecRequest> = {}) => execute(deps, { ...request(key, ["true"], extra), workspace_id: workspace });
    await call("one");
    await call("two");
    expect(await statusOf(call("three"))).toMatch(/^409 This workspace already has 2 live sandbox containers/);
    // A restart replaces a container rather than adding one; a live one is still reached.
    expect(await call("two", { restart: true })).toMatchObject({ started: true });
    expect(await call("one")).toMatchObject({ started: false });
  });

  it("gives live containers different user slots, and frees a slot only once its container is removed", async () => {
    const deps = replica();
    const slots = async () => db.query<{ id: string; uid_slot: number | null; ended: boolean }>("SELECT id, uid_slot, ended_at IS NOT NULL AS ended FROM sandbox.containers WHERE origin_key LIKE 'slot-%' ORDER BY created_at");
    const a = await execute(deps, request("slot-a", ["true"]));
    await execute(deps, request("slot-b", ["true"]));
    const live = (await slots()).map((r) => r.uid_slot);
    expect(new Set(live).size).toBe(2);
    await execute(deps, request("slot-a", ["true"], { restart: true }));
    const deadline = Date.now() + 3000;
    while ((await slots()).find((r) => r.id === a.container_id)?.uid_slot !== null && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    const after = await slots();
    expect(after.find((r) => r.id === a.container_id)).toMatchObject({ ended: true, uid_slot: null });
    const held = after.filter((r) => !r.ended).map((r) => r.uid_slot);
    expect(new Set(held).size).toBe(held.length);
  });

  it("kills a command whose caller closed the connection to the internal route", async () => {
    const deps = replica();
    const server = createApp(deps).listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/internal/sandbox/exec`;
      const token = await createServiceSigner(secret, "inference")();
      const headers = { "content-type": "application/json", [serviceHeader]: token };
      const call = fetch(url, { method: "POST", headers, body: JSON.stringify(request("abandoned", ["sleep 30.25; echo never"])), signal: AbortSignal.timeout(500) });
      await expect(call).rejects.toThrow();
      const deadline = Date.now() + 3000;
      while ((await processesWith("30.25")) > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(await processesWith("30.25")).toBe(0);
      // Its container is free again at once.
      const next = await fetch(url, { method: "POST", headers, body: JSON.stringify(request("abandoned", ["echo next"])), signal: AbortSignal.timeout(5000) });
      expect(((await next.json()) as { results: Array<{ stdout: string }> }).results[0]!.stdout).toBe("next\n");
    } finally {
      server.close();
    }
  });

  it("with SANDBOX_RUNNER=off, refuses every command with a 503 that says so", async () => {
    const off = { ...replica(), runner: offRunner() };
    expect(await statusOf(execute(off, request("off", ["true"])))).toBe("503 Shell tools are turned off on this gateway (SANDBOX_RUNNER=off)");
    const sandbox = await startSandbox({
      db,
      logger: silentLogger(),
      reportFiles: async () => 0,
      config: loadSandboxConfig({ SANDBOX_RUNNER: "off", SANDBOX_DIR: dir }),
      verifyService: createServiceVerifier(secret),
      health: { draining: false },
    });
    try {
      expect(await statusOf(sandbox.execute(request("off", ["true"])))).toMatch(/^503 .*SANDBOX_RUNNER=off/);
    } finally {
      await sandbox.stop();
    }
  });
});
