import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "./support/gateway.js";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(async () => {
  await gw?.stop();
});

describe("workspaces", () => {
  it("has a default workspace made at bootstrap", async () => {
    const res = await gw.call("GET", "/workspaces");
    expect(res.status).toBe(200);
    expect(res.body.total_count).toBe(1);
    expect(res.body.data?.[0]).toMatchObject({ slug: "default", is_default: true, data_collection: "allow", zdr: false });
  });

  it("creates, reads, updates and deletes a workspace with provider preferences and privacy settings", async () => {
    const created = await gw.call("POST", "/workspaces", {
      body: { name: "Research", slug: "research", allowed_providers: ["openai", "anthropic"], data_collection: "deny", zdr: true },
    });
    expect(created.status).toBe(201);
    const ws = created.body.data!;
    expect(ws).toMatchObject({ name: "Research", slug: "research", allowed_providers: ["openai", "anthropic"], ignored_providers: null, data_collection: "deny", zdr: true, is_default: false });
    expect(ws.default_guardrail_id).toMatch(/^[0-9a-f-]{36}$/);
    const id = String(ws.id);
    const got = await gw.call("GET", `/workspaces/${id}`);
    expect(got.body.data).toEqual(ws);
    const updated = await gw.call("PATCH", `/workspaces/${id}`, { body: { ignored_providers: ["groq"], allowed_providers: null, description: "ml team", io_logging_sampling_rate: 0.5 } });
    expect(updated.status).toBe(200);
    expect(updated.body.data).toMatchObject({ ignored_providers: ["groq"], allowed_providers: null, description: "ml team", io_logging_sampling_rate: 0.5, zdr: true });
    expect(updated.body.data?.updated_at).not.toBeNull();

    // A key can live in the workspace; the workspace cannot be deleted while it has keys.
    const key = await gw.call("POST", "/keys", { body: { name: "in research", workspace_id: id } });
    expect(key.body.data?.workspace_id).toBe(id);
    expect((await gw.call("DELETE", `/workspaces/${id}`)).status).toBe(409);
    await gw.call("DELETE", `/keys/${String(key.body.data?.hash)}`);
    expect((await gw.call("DELETE", `/workspaces/${id}`)).body).toEqual({ deleted: true });
    expect((await gw.call("GET", `/workspaces/${id}`)).status).toBe(404);
  });

  it("rejects invalid input and duplicate slugs", async () => {
    const cases: [string, string, unknown, number][] = [
      ["POST", "/workspaces", { name: "x" }, 400],
      ["POST", "/workspaces", { name: "x", slug: "Bad Slug" }, 400],
      ["POST", "/workspaces", { name: "x", slug: "ok", data_collection: "maybe" }, 400],
      ["POST", "/workspaces", { name: "x", slug: "ok", allowed_providers: ["Not A Slug!"] }, 400],
      ["POST", "/workspaces", { name: "x", slug: "ok", io_logging_sampling_rate: 2 }, 400],
      // A switch for what Switchyard does not do is refused, not stored to do nothing; so are key ids it has not.
      ["POST", "/workspaces", { name: "x", slug: "ok", is_data_discount_logging_enabled: true }, 400],
      ["POST", "/workspaces", { name: "x", slug: "ok", io_logging_api_key_ids: [42] }, 400],
      ["POST", "/workspaces", { name: "Default again", slug: "default" }, 409],
      ["GET", "/workspaces/not-a-uuid", undefined, 400],
      ["GET", "/workspaces/5f0c1c8e-7a8e-4d1c-9a55-0e8d0f7d9b11", undefined, 404],
      ["GET", "/workspaces?limit=0", undefined, 400],
      ["GET", "/workspaces?offset=-3", undefined, 400],
    ];
    for (const [method, path, body, status] of cases) {
      const res = await gw.call(method, path, body === undefined ? {} : { body });
      expect(res.status, `${method} ${path} ${JSON.stringify(body)}`).toBe(status);
      expect(res.body.error?.code).toBe(status);
    }
    const list = await gw.call("GET", "/workspaces");
    const def = (list.body.data ?? []).find((w) => w.is_default)!;
    expect((await gw.call("DELETE", `/workspaces/${String(def.id)}`)).status).toBe(400);
  });

  it("is management-only and scoped to the organization", async () => {
    const key = await gw.call("POST", "/keys", { body: { name: "inference" } });
    const res = await gw.call("GET", "/workspaces", { key: String(key.body.key) });
    expect(res.status).toBe(403);
    const other = await gw.standalone.identity.createOrganization("Elsewhere");
    const theirs = await gw.call("GET", "/workspaces", { key: other.managementKey });
    const mine = await gw.call("GET", "/workspaces");
    const myIds = (mine.body.data ?? []).map((w) => w.id);
    for (const w of theirs.body.data ?? []) expect(myIds).not.toContain(w.id);
    expect((await gw.call("GET", `/workspaces/${String(myIds[0])}`, { key: other.managementKey })).status).toBe(404);
  });
});
