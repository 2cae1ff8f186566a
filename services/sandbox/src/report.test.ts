import { mkdir, mkdtemp, rm, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createServiceVerifier, migrate, openDatabase, silentLogger, type Db } from "@switchyard/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../tests/support/postgres.js";
import { loadSandboxConfig } from "./config.js";
import type { SandboxDeps, SyncReport } from "./deps.js";
import { keyedLock } from "./lock.js";
import { migrations, schema } from "./migrations.js";
import { maxReportedFiles, reportFiles } from "./report.js";
import { directRunner } from "./runners/direct.js";

let database: TestDatabase;
let db: Db;
let dir: string;
const owner = { organizationId: "00000000-0000-4000-8000-000000000001", workspaceId: "00000000-0000-4000-8000-000000000002" };

beforeAll(async () => {
  database = await createTestDatabase();
  db = await openDatabase({ url: database.url });
  await migrate(db, schema, migrations);
  dir = await mkdtemp(join(tmpdir(), "sy-report-"));
});
afterAll(async () => {
  await db?.close();
  await database?.drop();
  await rm(dir, { recursive: true, force: true });
});

/** A replica whose storage records every sync call it is sent. */
function replica(calls: SyncReport[]): SandboxDeps {
  return {
    db,
    runner: directRunner(dir),
    logger: silentLogger(),
    async reportFiles(_id, body) {
      calls.push(structuredClone(body));
      return body.files.length;
    },
    limits: loadSandboxConfig({ SANDBOX_DIR: dir }),
    lock: keyedLock(),
    reported: new Map(),
    verifyService: createServiceVerifier("unused-secret-0123456789abcdef0123"),
    requestLogs: false,
    health: { draining: false },
    readiness: {},
  };
}

async function container(id: string) {
  await db.query("INSERT INTO sandbox.containers (id, organization_id, workspace_id, origin, origin_key, idle_ms, uid_slot) VALUES ($1, $2, $3, 'reference', $1, 1000, NULL)", [
    id,
    owner.organizationId,
    owner.workspaceId,
  ]);
  await mkdir(join(dir, id), { recursive: true });
  return join(dir, id);
}

describe("file reports", () => {
  it("reports new and changed files, and the paths deleted since, at one sync time per report", async () => {
    const home = await container("deletions");
    const calls: SyncReport[] = [];
    const deps = replica(calls);
    await writeFile(join(home, "a.txt"), "a");
    await writeFile(join(home, "b.txt"), "bb");
    expect(await reportFiles(deps, "deletions", owner)).toEqual({ synced: 2 });
    // Its first report names the whole tree, so storage drops whatever else it listed.
    expect(calls).toEqual([expect.objectContaining({ files: [expect.objectContaining({ path: "a.txt" }), expect.objectContaining({ path: "b.txt" })], complete: true })]);
    calls.length = 0;
    await unlink(join(home, "b.txt"));
    await writeFile(join(home, "a.txt"), "changed");
    await writeFile(join(home, "c.txt"), "c");
    expect(await reportFiles(deps, "deletions", owner)).toEqual({ synced: 2 });
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ deleted: ["b.txt"], synced_at: expect.any(String) });
    expect(calls[0]!.files.map((f) => f.path).sort()).toEqual(["a.txt", "c.txt"]);
    expect(calls[0]!.complete).toBeUndefined();
    calls.length = 0;
    expect(await reportFiles(deps, "deletions", owner)).toEqual({ synced: 0 });
    expect(calls).toEqual([]);
  });

  it("reports the whole tree again from a replica that did not make the last report", async () => {
    const home = await container("replicas");
    const firstCalls: SyncReport[] = [];
    const secondCalls: SyncReport[] = [];
    const [first, second] = [replica(firstCalls), replica(secondCalls)];
    await writeFile(join(home, "kept.txt"), "k");
    await reportFiles(first, "replicas", owner);
    await writeFile(join(home, "new.txt"), "n");
    await reportFiles(second, "replicas", owner);
    await unlink(join(home, "new.txt"));
    // The first replica's memory is of an older report: it cannot know what the second sent, so it sends all.
    await reportFiles(first, "replicas", owner);
    expect(firstCalls.at(-1)).toMatchObject({ files: [expect.objectContaining({ path: "kept.txt" })], complete: true });
  });

  it("says which files it could not list, rather than dropping them silently", async () => {
    const home = await container("unlisted");
    const calls: SyncReport[] = [];
    await writeFile(join(home, "bell\u0007.txt"), "x");
    await writeFile(join(home, "fine.txt"), "x");
    const report = await reportFiles(replica(calls), "unlisted", owner);
    expect(report.synced).toBe(1);
    expect(report.error).toMatch(/1 file\(s\) are not in the container's file list because their names have control characters/);
    expect(report.error).toContain(JSON.stringify("bell\u0007.txt"));
  });

  it(`says so when a container has more than ${maxReportedFiles} files, and reports no deletions it cannot see`, async () => {
    const home = await container("crowded");
    await mkdir(join(home, "many"));
    for (let i = 0; i <= maxReportedFiles; i += 1) await writeFile(join(home, "many", `f${i}`), "");
    const calls: SyncReport[] = [];
    const deps = replica(calls);
    const report = await reportFiles(deps, "crowded", owner);
    expect(report.synced).toBe(maxReportedFiles);
    expect(report.error).toMatch(/more than 10000 files: only 10000 are in its file list/);
    expect(calls.every((call) => !call.complete && !call.deleted)).toBe(true);
  }, 60_000);
});
