import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { diskObjectStore, migrate, openDatabase, outboxSink, type Db, type ObjectStore } from "@switchyard/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../../tests/support/postgres.js";
import { migrations, schema } from "../migrations.js";
import { syncContainerFiles, type SyncBody } from "./sync.js";

let database: TestDatabase;
let db: Db;
let dir: string;
let objects: ObjectStore;
const who = { organization_id: "00000000-0000-4000-8000-000000000001", workspace_id: "00000000-0000-4000-8000-000000000002" };
const at = "2026-11-24T10:00:00.000Z";

beforeAll(async () => {
  database = await createTestDatabase();
  db = await openDatabase({ url: database.url });
  await migrate(db, schema, migrations);
  dir = await mkdtemp(join(tmpdir(), "sy-container-sync-"));
  objects = diskObjectStore(dir);
});
afterAll(async () => {
  await db?.close();
  await database?.drop();
  await rm(dir, { recursive: true, force: true });
});

const sync = (id: string, body: Partial<SyncBody>) => syncContainerFiles({ db, objects, events: outboxSink(schema, { wake: () => undefined }) }, id, { ...who, ...body });
const file = (path: string, content?: string) => ({ path, bytes: content?.length ?? 1, modified_at: at, ...(content === undefined ? {} : { content_base64: Buffer.from(content).toString("base64") }) });
const rows = async (id: string) => db.query<{ path: string; synced_at: Date; object_key: string | null }>("SELECT path, synced_at, object_key FROM storage.container_files WHERE container_id = $1 ORDER BY path", [id]);
const stored = async (id: string, path: string) => (await objects.get(`containers/${id}/${path}`)) !== undefined;

describe("container file sync", () => {
  it("records the sync's time, not the file's modification time", async () => {
    await sync("c_time", { files: [file("a.txt")], synced_at: "2026-11-25T08:00:00Z" });
    expect((await rows("c_time"))[0]!.synced_at.toISOString()).toBe("2026-11-25T08:00:00.000Z");
  });

  it("removes deleted files' rows and bodies", async () => {
    await sync("c_deleted", { files: [file("keep.txt", "k"), file("gone.txt", "g")] });
    expect(await stored("c_deleted", "gone.txt")).toBe(true);
    expect(await sync("c_deleted", { deleted: ["gone.txt"] })).toBe(0);
    expect((await rows("c_deleted")).map((r) => r.path)).toEqual(["keep.txt"]);
    expect(await stored("c_deleted", "gone.txt")).toBe(false);
    expect(await stored("c_deleted", "keep.txt")).toBe(true);
  });

  it("after a complete report, drops the files it did not write, bodies included", async () => {
    await sync("c_whole", { files: [file("a.txt", "a"), file("b.txt", "b")], synced_at: at });
    const later = "2026-11-24T11:00:00.000Z";
    await sync("c_whole", { files: [file("a.txt", "A")], synced_at: later });
    await sync("c_whole", { synced_at: later, complete: true });
    expect((await rows("c_whole")).map((r) => r.path)).toEqual(["a.txt"]);
    expect(await stored("c_whole", "b.txt")).toBe(false);
  });

  it("drops a body that a file synced again without content leaves stale", async () => {
    await sync("c_stale", { files: [file("big.bin", "small at first")] });
    await sync("c_stale", { files: [{ path: "big.bin", bytes: 99_000_000, modified_at: at }] });
    expect(await rows("c_stale")).toEqual([expect.objectContaining({ path: "big.bin", object_key: null })]);
    expect(await stored("c_stale", "big.bin")).toBe(false);
  });

  it("keeps another workspace's container out, deletions included", async () => {
    await sync("c_owned", { files: [file("mine.txt")] });
    const other = { ...who, workspace_id: "00000000-0000-4000-8000-0000000000ff" };
    await expect(syncContainerFiles({ db, objects, events: outboxSink(schema, { wake: () => undefined }) }, "c_owned", { ...other, deleted: ["mine.txt"] })).rejects.toThrow(
      /belongs to another workspace/,
    );
    expect((await rows("c_owned")).map((r) => r.path)).toEqual(["mine.txt"]);
  });
});
