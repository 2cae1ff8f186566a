import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { diskObjectStore, migrate, openPglite, silentLogger, type Db } from "@switchyard/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrations, schema } from "../migrations.js";
import { findFile, insertUpload, markDeleting, markReady } from "./records.js";
import { startSweeper } from "./sweeper.js";

let db: Db;
let dir: string;
const owner = { organizationId: "00000000-0000-4000-8000-000000000001", workspaceId: "00000000-0000-4000-8000-000000000002" };

beforeAll(async () => {
  db = await openPglite();
  await migrate(db, schema, migrations);
  dir = await mkdtemp(join(tmpdir(), "switchyard-sweep-"));
});
afterAll(async () => {
  await db.close();
  await rm(dir, { recursive: true, force: true });
});

describe("the file sweeper", () => {
  it("removes uploads a crash left half-written and deletions left half-done, never ready files", async () => {
    const objects = diskObjectStore(dir);
    const file = (id: string) => ({ id, filename: `${id}.txt`, mimeType: "text/plain", size: 2, objectKey: `files/${id}` });
    for (const id of ["or_file_orphan", "or_file_ready", "or_file_deleting"]) {
      await insertUpload(db, owner, file(id));
      await objects.put(`files/${id}`, Buffer.from("hi"), "text/plain");
    }
    await markReady(db, "or_file_ready");
    await markReady(db, "or_file_deleting");
    await markDeleting(db, owner, "or_file_deleting");
    const sweeper = startSweeper({ db, objects, logger: silentLogger(), olderThanMs: 1000, everyMs: 3_600_000 });
    expect(await sweeper.sweep()).toBe(0); // too young: an upload may still be under way
    await db.query(`UPDATE storage.files SET updated_at = now() - interval '1 hour'`);
    expect(await sweeper.sweep()).toBe(2);
    sweeper.stop();
    expect(await objects.get("files/or_file_orphan")).toBeUndefined();
    expect(await objects.get("files/or_file_deleting")).toBeUndefined();
    expect(await objects.get("files/or_file_ready")).toBeDefined();
    expect(await findFile(db, owner, "or_file_ready")).toBeDefined();
    expect((await db.query(`SELECT id FROM storage.files ORDER BY id`)).map((r) => (r as { id: string }).id)).toEqual(["or_file_ready"]);
  });
});
