import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import pg from "pg";
import { openObjectStore, type ObjectStore } from "@switchyard/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "./support/eventually.js";
import { bootstrapKey, startTestGateway, type TestGateway } from "./support/gateway.js";
import { startTestNats, type TestNats } from "./support/nats.js";
import { testObjectStoreEnv } from "./support/object-store.js";

/** A file upload to a named workspace with the management key, as curl's `-F file=@notes.txt` sends it. */
async function upload(gw: TestGateway, workspaceId: string): Promise<string> {
  const form = new FormData();
  form.set("file", new Blob([Buffer.from("workspace notes\n")]), "notes.txt");
  const res = await fetch(`${gw.apiUrl}/files?workspace_id=${workspaceId}`, { method: "POST", headers: { authorization: `Bearer ${bootstrapKey}` }, body: form });
  expect(res.status).toBe(200);
  return String(((await res.json()) as { id: string }).id);
}

const assignmentHashes = (body: Record<string, unknown>) => ((body.data ?? []) as Array<{ key_hash: string }>).map((a) => a.key_hash);
const assignmentGuardrails = (body: Record<string, unknown>) => ((body.data ?? []) as Array<{ guardrail_id: string }>).map((a) => a.guardrail_id);

describe.each([
  ["the in-process bus", false],
  ["NATS JetStream", true],
])("deleting a workspace or a key, with %s", (_name, overNats) => {
  let gw: TestGateway;
  let nats: TestNats | undefined;
  let objects: ObjectStore;
  let dataDir: string;
  let db: pg.Client | undefined;
  const logs = new PassThrough();
  const lines: string[] = [];
  logs.on("data", (chunk: Buffer) => lines.push(...chunk.toString("utf8").split("\n").filter(Boolean)));

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "switchyard-deletion-"));
    const objectEnv = testObjectStoreEnv();
    nats = overNats ? await startTestNats() : undefined;
    gw = await startTestGateway(
      {
        SWITCHYARD_DATA_DIR: dataDir,
        LOG_LEVEL: "info",
        ...objectEnv,
        ...(nats ? { NATS_URL: nats.url, NATS_NAMESPACE: `wsdel${randomBytes(4).toString("hex")}` } : {}),
      },
      { logs },
    );
    // The gateway's own store, opened beside it, to see whether an object is still there.
    objects = await openObjectStore({
      S3_ENDPOINT: objectEnv.S3_ENDPOINT,
      S3_BUCKET: objectEnv.S3_BUCKET ?? "switchyard",
      S3_REGION: objectEnv.S3_REGION ?? "us-east-1",
      S3_ACCESS_KEY_ID: objectEnv.S3_ACCESS_KEY_ID,
      S3_SECRET_ACCESS_KEY: objectEnv.S3_SECRET_ACCESS_KEY,
      S3_FORCE_PATH_STYLE: objectEnv.S3_FORCE_PATH_STYLE !== "false",
      SWITCHYARD_DATA_DIR: dataDir,
    });
    if (gw.databaseUrl) {
      db = new pg.Client({ connectionString: gw.databaseUrl });
      await db.connect();
    }
  });
  afterAll(async () => {
    await db?.end();
    await gw?.stop();
    await nats?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it("removes the workspace's files, container files and guardrails, with their key assignments", async () => {
    const me = await gw.call("GET", "/key");
    const organizationId = String(me.body.data?.organization_id);
    const ws = await gw.call("POST", "/workspaces", { body: { name: "Doomed", slug: `doomed-${randomBytes(3).toString("hex")}` } });
    expect(ws.status).toBe(201);
    const workspaceId = String(ws.body.data?.id);

    const fileId = await upload(gw, workspaceId);
    const fileObject = `files/${workspaceId}/${fileId}`;
    expect(await objects.get(fileObject)).toBeDefined();
    const containerId = `sess_doomed${randomBytes(3).toString("hex")}`;
    const content = Buffer.from("made in the sandbox");
    await gw.standalone.storage.syncContainerFiles(containerId, {
      organization_id: organizationId,
      workspace_id: workspaceId,
      files: [{ path: "out/result.txt", bytes: content.length, content_base64: content.toString("base64"), modified_at: new Date().toISOString() }],
    });
    const containerObject = `containers/${containerId}/out/result.txt`;
    expect(await objects.get(containerObject)).toBeDefined();

    // A guardrail of the workspace, assigned to a key of the default workspace.
    const guardrail = await gw.call("POST", "/guardrails", { body: { name: "doomed budget", workspace_id: workspaceId, limit_usd: 5, reset_interval: "daily" } });
    expect(guardrail.status).toBe(201);
    const guardrailId = String(guardrail.body.data?.id);
    const outside = await gw.call("POST", "/keys", { body: { name: "outside key" } });
    const outsideHash = String(outside.body.data?.hash);
    expect((await gw.call("POST", `/guardrails/${guardrailId}/assignments/keys`, { body: { key_hashes: [outsideHash] } })).body).toEqual({ assigned_count: 1 });
    expect(assignmentGuardrails((await gw.call("GET", "/guardrails/assignments/keys?limit=1000")).body)).toContain(guardrailId);

    expect((await gw.call("DELETE", `/workspaces/${workspaceId}`)).body).toEqual({ deleted: true });

    await eventually(async () => (await gw.call("GET", `/guardrails/${guardrailId}`)).status === 404, 10_000);
    expect((await gw.call("GET", `/guardrails?workspace_id=${workspaceId}`)).body).toMatchObject({ total_count: 0, data: [] });
    expect(assignmentGuardrails((await gw.call("GET", "/guardrails/assignments/keys?limit=1000")).body)).not.toContain(guardrailId);
    await eventually(async () => (await objects.get(fileObject)) === undefined && (await objects.get(containerObject)) === undefined, 10_000);
    if (db) {
      await eventually(async () => (await db!.query(`SELECT 1 FROM storage.files WHERE workspace_id = $1`, [workspaceId])).rowCount === 0, 10_000);
      await eventually(async () => (await db!.query(`SELECT 1 FROM storage.container_files WHERE workspace_id = $1`, [workspaceId])).rowCount === 0, 10_000);
    }
    // Each consumer says what it removed.
    await eventually(async () => lines.some((l) => l.includes(workspaceId) && l.includes("guardrails of a deleted workspace")), 5_000);
    await eventually(async () => lines.some((l) => l.includes(workspaceId) && l.includes("files of a deleted workspace")), 5_000);
  });

  it("removes a deleted key's guardrail assignments from the listings and from the count the 50,000 cap reads", async () => {
    const guardrail = await gw.call("POST", "/guardrails", { body: { name: `keys ${randomBytes(3).toString("hex")}` } });
    const guardrailId = String(guardrail.body.data?.id);
    const [kept, doomed] = await Promise.all(["kept key", "doomed key"].map((name) => gw.call("POST", "/keys", { body: { name } })));
    const keptHash = String(kept!.body.data?.hash);
    const doomedHash = String(doomed!.body.data?.hash);
    expect((await gw.call("POST", `/guardrails/${guardrailId}/assignments/keys`, { body: { key_hashes: [keptHash, doomedHash] } })).body).toEqual({ assigned_count: 2 });
    expect((await gw.call("GET", `/guardrails/${guardrailId}/assignments/keys`)).body).toMatchObject({ total_count: 2 });

    expect((await gw.call("DELETE", `/keys/${doomedHash}`)).status).toBe(200);

    // The listing's total is the count a new assignment is checked against.
    await eventually(async () => (await gw.call("GET", `/guardrails/${guardrailId}/assignments/keys`)).body.total_count === 1, 10_000);
    const listed = await gw.call("GET", `/guardrails/${guardrailId}/assignments/keys`);
    expect(assignmentHashes(listed.body)).toEqual([keptHash]);
    expect(assignmentHashes((await gw.call("GET", "/guardrails/assignments/keys?limit=1000")).body)).not.toContain(doomedHash);
    await eventually(async () => lines.some((l) => l.includes(doomedHash.slice(0, 12)) && l.includes("guardrail assignments of a deleted key")), 5_000);
  });
});
