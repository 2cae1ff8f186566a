import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "./support/eventually.js";
import { startTestNats, type TestNats } from "./support/nats.js";
import { createTestDatabase, type TestDatabase } from "./support/postgres.js";
import { spendTopologyStartupMs, startSpendTopology, type SpendTopology } from "./support/spend-topology.js";

let nats: TestNats;
let database: TestDatabase;
let topology: SpendTopology;

beforeAll(async () => {
  nats = await startTestNats();
  database = await createTestDatabase();
  topology = await startSpendTopology({ natsUrl: nats.url, databaseUrl: database.url });
}, spendTopologyStartupMs);
afterAll(async () => {
  await topology?.stop();
  await database?.drop();
  await nats?.stop();
});

const call = (method: string, path: string, body?: unknown) => topology.driver.call(method, path, body);
const listed = async (path: string, field: "key_hash" | "guardrail_id") =>
  (((await call("GET", path)).body.data ?? []) as unknown as Array<Record<string, string>>).map((a) => a[field]);

// Identity and catalog as separate processes: identity's deletion events reach catalog over NATS JetStream,
// and catalog writes the changed budgets back to identity over HTTP.
describe("deletions in the topology", () => {
  it("a deleted workspace takes its guardrails and their assignments; a deleted key leaves its guardrails", async () => {
    const ws = await call("POST", "/workspaces", { name: "Doomed", slug: "doomed-topology" });
    expect(ws.status).toBe(201);
    const workspaceId = String((ws.body.data as Record<string, unknown>).id);
    const guardrail = await call("POST", "/guardrails", { name: "doomed", workspace_id: workspaceId, limit_usd: 5, reset_interval: "daily" });
    const doomedGuardrail = String((guardrail.body.data as Record<string, unknown>).id);
    const other = await call("POST", "/guardrails", { name: "kept", limit_usd: 5, reset_interval: "daily" });
    const keptGuardrail = String((other.body.data as Record<string, unknown>).id);
    const key = await call("POST", "/keys", { name: "assigned" });
    const hash = String((key.body.data as Record<string, unknown>).hash);
    for (const id of [doomedGuardrail, keptGuardrail]) {
      expect((await call("POST", `/guardrails/${id}/assignments/keys`, { key_hashes: [hash] })).body).toEqual({ assigned_count: 1 });
    }

    expect((await call("DELETE", `/workspaces/${workspaceId}`)).body).toEqual({ deleted: true });
    await eventually(async () => (await call("GET", `/guardrails/${doomedGuardrail}`)).status === 404, 15_000);
    expect(await listed("/guardrails/assignments/keys?limit=1000", "guardrail_id")).toEqual([keptGuardrail]);

    expect((await call("DELETE", `/keys/${hash}`)).status).toBe(200);
    await eventually(async () => (await call("GET", `/guardrails/${keptGuardrail}/assignments/keys`)).body.total_count === 0, 15_000);
    expect(await listed("/guardrails/assignments/keys?limit=1000", "key_hash")).toEqual([]);
  });
});
