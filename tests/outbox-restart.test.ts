import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openPglite } from "@switchyard/runtime";
import { afterAll, describe, expect, it } from "vitest";
import { eventually } from "./support/eventually.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";

/**
 * A standalone gateway that stopped between a commit and the publish of its event finds the event in its
 * outbox at the next start. The in-process bus has no stream to replay, and identity's relay starts before
 * catalog's consumers subscribe: the event must wait for them.
 */
describe("an event a standalone gateway left in its outbox", () => {
  let dataDir: string | undefined;
  let gateway: TestGateway | undefined;
  afterAll(async () => {
    await gateway?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it("reaches the consumers of services that start after its producer", async () => {
    dataDir = await mkdtemp(join(tmpdir(), "switchyard-outbox-restart-"));
    const env = { SWITCHYARD_DATA_DIR: dataDir };
    gateway = await startTestGateway(env, { embeddedDatabase: true });
    const me = await gateway.call("GET", "/key");
    const key = await gateway.call("POST", "/keys", { body: { name: "left behind" } });
    expect(key.status).toBe(201);
    const hash = String(key.body.data?.hash);
    const guardrail = await gateway.call("POST", "/guardrails", { body: { name: "Assigned" } });
    expect(guardrail.status).toBe(201);
    const guardrailId = String(guardrail.body.data?.id);
    expect((await gateway.call("POST", `/guardrails/${guardrailId}/assignments/keys`, { body: { key_hashes: [hash] } })).body).toEqual({ assigned_count: 1 });
    const assigned = async () => (await gateway!.call("GET", `/guardrails/${guardrailId}/assignments/keys`)).body.total_count;
    expect(await assigned()).toBe(1);
    await gateway.stop();
    gateway = undefined;

    // What deleting the key commits, as a gateway that stopped before its relay published leaves it.
    const db = await openPglite(join(dataDir, "pg"));
    await db.query("DELETE FROM identity.api_keys WHERE hash = $1", [hash]);
    await db.query("INSERT INTO identity.outbox (id, subject, data) VALUES ($1, 'identity.api_key.deleted.v1', $2)", [
      randomUUID(),
      JSON.stringify({ hash, organization_id: me.body.data?.organization_id, workspace_id: me.body.data?.workspace_id }),
    ]);
    await db.close();

    gateway = await startTestGateway(env, { embeddedDatabase: true });
    await eventually(async () => (await assigned()) === 0, 5000);
  });
});
