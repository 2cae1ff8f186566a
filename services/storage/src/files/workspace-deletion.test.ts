import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { EventEnvelope } from "@switchyard/contracts";
import { createMemoryBus, diskObjectStore, migrate, openPglite, silentLogger, type Db, type ObjectStore } from "@switchyard/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { upsertContainerFiles } from "../containers/records.js";
import { migrations, schema } from "../migrations.js";
import { insertUpload, markReady } from "./records.js";
import { startWorkspaceFilesConsumer } from "./workspace-deletion.js";

let db: Db;
let dir: string;
const organizationId = "00000000-0000-4000-8000-000000000001";
const doomed = { organizationId, workspaceId: "00000000-0000-4000-8000-000000000002" };
const kept = { organizationId, workspaceId: "00000000-0000-4000-8000-000000000003" };

beforeAll(async () => {
  db = await openPglite();
  await migrate(db, schema, migrations);
  dir = await mkdtemp(join(tmpdir(), "switchyard-workspace-files-"));
});
afterAll(async () => {
  await db.close();
  await rm(dir, { recursive: true, force: true });
});

async function addFile(objects: ObjectStore, owner: typeof doomed, id: string, ready: boolean): Promise<string> {
  const objectKey = `files/${owner.workspaceId}/${id}`;
  await insertUpload(db, owner, { id, filename: `${id}.txt`, mimeType: "text/plain", size: 2, objectKey });
  await objects.put(objectKey, Buffer.from("hi"), "text/plain");
  if (ready) await markReady(db, id);
  return objectKey;
}

const deleted = (workspaceId: string): EventEnvelope => ({
  id: randomUUID(),
  subject: "identity.workspace.deleted.v1",
  occurred_at: new Date().toISOString(),
  data: { id: workspaceId, organization_id: organizationId, default_guardrail_id: randomUUID() },
});

const count = async (table: string, workspaceId: string) =>
  (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM storage.${table} WHERE workspace_id = $1`, [workspaceId]))[0]?.n;

describe("the files of a deleted workspace", () => {
  it("go with it, objects and rows, once however often the event comes; an upload under way cannot finish", async () => {
    const objects = diskObjectStore(dir);
    const ready = await addFile(objects, doomed, "or_file_ready", true);
    const uploading = await addFile(objects, doomed, "or_file_uploading", false);
    const theirs = await addFile(objects, kept, "or_file_theirs", true);
    await objects.put("containers/sess_a/out.txt", Buffer.from("out"), "application/octet-stream");
    await upsertContainerFiles(db, doomed, "sess_a", [{ path: "out.txt", bytes: 3, objectKey: "containers/sess_a/out.txt" }, { path: "log.txt", bytes: 9, objectKey: null }], new Date());
    await upsertContainerFiles(db, kept, "sess_b", [{ path: "keep.txt", bytes: 1, objectKey: null }], new Date());

    const lines: Array<Record<string, unknown>> = [];
    const logger = silentLogger();
    logger.info = ((fields: Record<string, unknown>) => void lines.push(fields)) as typeof logger.info;
    const bus = createMemoryBus({ logger: silentLogger() });
    const consumer = await startWorkspaceFilesConsumer({ db, objects, bus, logger });
    const event = deleted(doomed.workspaceId);
    await bus.publish(event);
    // At-least-once: the same event again removes nothing more.
    await bus.publish(event);
    await consumer.stop();

    for (const key of [ready, uploading, "containers/sess_a/out.txt"]) expect(await objects.get(key)).toBeUndefined();
    expect(await count("files", doomed.workspaceId)).toBe(0);
    expect(await count("container_files", doomed.workspaceId)).toBe(0);
    expect(await objects.get(theirs)).toBeDefined();
    expect(await count("files", kept.workspaceId)).toBe(1);
    expect(await count("container_files", kept.workspaceId)).toBe(1);
    expect(lines).toEqual([
      { workspaceId: doomed.workspaceId, organizationId, files: 2, containerFiles: 2, bytes: 7 },
      { workspaceId: doomed.workspaceId, organizationId, files: 0, containerFiles: 0, bytes: 0 },
    ]);
    // The upload that was being written when its workspace went finds its row gone.
    expect(await markReady(db, "or_file_uploading")).toBeUndefined();
  });

  it("are retried when the object store fails, not dropped", async () => {
    const disk = diskObjectStore(dir);
    const key = await addFile(disk, doomed, "or_file_retried", true);
    let failures = 1;
    // The object store refuses the first deletion, as an S3 server that is briefly away does.
    const objects: ObjectStore = {
      ...disk,
      delete: async (k) => {
        if (failures-- > 0) throw new Error("object store unavailable");
        await disk.delete(k);
      },
    };
    const bus = createMemoryBus({ logger: silentLogger() });
    const consumer = await startWorkspaceFilesConsumer({ db, objects, bus, logger: silentLogger() });
    await bus.publish(deleted(doomed.workspaceId));
    await consumer.stop();
    expect(failures).toBe(-1);
    expect(await disk.get(key)).toBeUndefined();
    expect(await count("files", doomed.workspaceId)).toBe(0);
  });
});
