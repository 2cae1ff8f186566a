import { OpenRouter } from "@openrouter/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { bootstrapKey, startTestGateway, type TestGateway } from "./support/gateway.js";

let gw: TestGateway;
let inference: string;
let admin: OpenRouter;
beforeAll(async () => {
  gw = await startTestGateway(await catalogEnv());
  inference = String((await gw.call("POST", "/keys", { body: { name: "inference" } })).body.key);
  admin = new OpenRouter({ apiKey: bootstrapKey, serverURL: gw.apiUrl });
});
afterAll(async () => {
  await gw?.stop();
});

const save = (slug: string, body: Record<string, unknown>, key?: string) =>
  gw.call("POST", `/presets/${slug}/chat/completions`, { body: { messages: [{ role: "user", content: "hi" }], ...body }, ...(key ? { key } : {}) });

describe("presets", () => {
  it("creates versions from chat requests, designates one, and serves it inline", async () => {
    const first = await save("support-bot", {
      model: "vendor/a",
      temperature: 0.2,
      messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "hi" }],
      name: "Support bot",
    });
    expect(first.status).toBe(200);
    expect(first.body.data).toMatchObject({
      slug: "support-bot",
      name: "Support bot",
      status: "active",
      designated_version: { version: 1, system_prompt: "Be brief.", config: { model: "vendor/a", temperature: 0.2 } },
    });
    expect(first.body.data?.designated_version).not.toHaveProperty("config.messages");
    const second = await save("support-bot", { model: "vendor/b", temperature: 1 });
    expect(second.body.data).toMatchObject({ name: "Support bot", designated_version: { version: 2, config: { model: "vendor/b" } } });

    // Every key of the workspace may read it; the designated version is inline.
    const read = await gw.call("GET", "/presets/support-bot", { key: inference });
    expect(read.status).toBe(200);
    expect(read.body.data).toMatchObject({ designated_version: { version: 2 } });
    const versions = await gw.call("GET", "/presets/support-bot/versions");
    expect((versions.body.data as unknown as Array<{ version: number }>).map((v) => v.version)).toEqual([1, 2]);
    expect((await gw.call("GET", "/presets/support-bot/versions/1")).body.data).toMatchObject({ version: 1, system_prompt: "Be brief." });
    expect((await gw.call("GET", "/presets/support-bot/versions/9")).status).toBe(404);

    const back = await gw.call("POST", "/presets/support-bot/designated-version", { body: { version: 1 } });
    expect(back.body.data).toMatchObject({ designated_version: { version: 1 }, designated_version_id: first.body.data?.designated_version_id });

    // The official client reads it and validates the shape.
    const viaSdk = await admin.presets.get({ slug: "support-bot" });
    expect(viaSdk.data.designatedVersion?.version).toBe(1);
    const listed = await admin.presets.list();
    expect(listed.result.data.map((p) => p.slug)).toContain("support-bot");

    // A preset reference resolves to its designated version's model and parameters.
    const me = await gw.call("GET", "/key", { key: inference });
    const workspaces = await gw.call("GET", "/workspaces");
    const ws = (workspaces.body.data as unknown as Array<{ id: string; is_default: boolean }>).find((w) => w.is_default)!;
    const resolved = await gw.standalone.catalog.resolveModel({
      model: "@preset/support-bot",
      keyHash: String(me.body.data?.hash),
      workspaceId: ws.id,
      organizationId: String(me.body.data?.organization_id),
    });
    expect(resolved).toMatchObject({ model: "vendor/a", preset: { slug: "support-bot", version: 1, system_prompt: "Be brief." } });
    expect(resolved.endpoints.map((e) => e.provider)).toEqual(["alpha", "beta"]);

    const viaPost = await gw.call("POST", "/presets", { body: { slug: "support-bot", model: "vendor/b", system_prompt: "Be kind." } });
    expect(viaPost.body.data).toMatchObject({ slug: "support-bot", designated_version: { version: 3, system_prompt: "Be kind.", config: { model: "vendor/b" } } });
    expect((await gw.call("POST", "/presets", { body: { model: "vendor/b" } })).status).toBe(400);
    expect((await gw.call("DELETE", "/presets/support-bot")).body).toEqual({ deleted: true });
    expect((await gw.call("GET", "/presets/support-bot")).status).toBe(404);
  });

  it("validates slugs, bodies and who may write", async () => {
    expect((await gw.call("GET", "/presets/bad%20slug")).status).toBe(400);
    expect((await gw.call("GET", "/presets/missing")).status).toBe(404);
    expect((await save("ok", { model: "vendor/a", temperature: 7 })).status).toBe(400);
    expect((await save("ok", { model: "vendor/a" }, inference)).status).toBe(403);
    expect((await gw.call("POST", "/presets/ok/designated-version", { body: { version: 0 } })).status).toBe(400);
    const other = await gw.standalone.identity.createOrganization("Elsewhere");
    await save("mine", { model: "vendor/a" });
    expect((await gw.call("GET", "/presets/mine", { key: other.managementKey })).status).toBe(404);
  });
});

describe("guardrails", () => {
  it("creates, reads, updates, lists and deletes with every field of the record", async () => {
    const created = await admin.guardrails.create({
      createGuardrailRequest: {
        name: "Budget",
        description: "team budget",
        limitUsd: 25,
        resetInterval: "monthly",
        allowedProviders: ["alpha"],
        enforceZdr: true,
      },
    });
    const id = created.data.id;
    expect(created.data).toMatchObject({ name: "Budget", limitUsd: 25, resetInterval: "monthly", allowedProviders: ["alpha"] });
    const raw = await gw.call("GET", `/guardrails/${id}`);
    expect(raw.body.data).toMatchObject({
      enforce_zdr: true,
      enforce_zdr_openai: true,
      enforce_zdr_anthropic: true,
      enforce_zdr_google: true,
      enforce_zdr_xai: true,
      enforce_zdr_other: true,
      enable_free_model_publication: false,
      content_filter_builtins: [],
      content_filters: null,
      allowed_data_regions: null,
      include_byok_in_budgets: false,
    });
    const got = await admin.guardrails.get({ id });
    expect(got.data.name).toBe("Budget");
    const updated = await gw.call("PATCH", `/guardrails/${id}`, { body: { name: "Renamed", enforce_zdr_openai: false, allowed_data_regions: ["europe"] } });
    expect(updated.body.data).toMatchObject({ name: "Renamed", enforce_zdr_openai: false, enforce_zdr_google: true, allowed_data_regions: ["europe"] });
    const list = await admin.guardrails.list();
    expect(list.result.data.map((g) => g.id)).toContain(id);
    expect((await gw.call("DELETE", `/guardrails/${id}`)).body).toEqual({ deleted: true });
    expect((await gw.call("GET", `/guardrails/${id}`)).status).toBe(404);
  });

  it("answers every builtin content filter with slug, label and action, filling the builtin's own label", async () => {
    const created = await gw.call("POST", "/guardrails", {
      body: { name: "Labels", content_filter_builtins: [{ slug: "email", action: "redact" }, { slug: "ssn", action: "block", label: "Social security" }] },
    });
    expect(created.status).toBe(201);
    const expected = [
      { slug: "email", label: "[EMAIL]", action: "redact" },
      { slug: "ssn", label: "Social security", action: "block" },
    ];
    expect(created.body.data?.content_filter_builtins).toEqual(expected);
    const id = String(created.body.data?.id);
    expect((await gw.call("GET", `/guardrails/${id}`)).body.data?.content_filter_builtins).toEqual(expected);
    const updated = await gw.call("PATCH", `/guardrails/${id}`, { body: { content_filter_builtins: [{ slug: "credit-card", action: "flag" }] } });
    expect(updated.body.data?.content_filter_builtins).toEqual([{ slug: "credit-card", label: "[CREDIT_CARD]", action: "flag" }]);
    const sdk = await admin.guardrails.get({ id });
    expect(sdk.data.contentFilterBuiltins).toEqual([{ slug: "credit-card", label: "[CREDIT_CARD]", action: "flag" }]);
  });

  it("keeps a budget to the picodollar, and refuses a finer one", async () => {
    const created = await gw.call("POST", "/guardrails", { body: { name: "fine", limit_usd: 0.123456789012, reset_interval: "daily" } });
    expect(created.status).toBe(201);
    expect((await gw.call("GET", `/guardrails/${String(created.body.data?.id)}`)).body.data).toMatchObject({ limit_usd: 0.123456789012 });
    const finer = await gw.call("PATCH", `/guardrails/${String(created.body.data?.id)}`, { body: { limit_usd: 4e-13 } });
    expect(finer.status).toBe(400);
    expect(finer.body.error?.message).toMatch(/limit_usd/);
    expect((await gw.call("GET", `/guardrails/${String(created.body.data?.id)}`)).body.data).toMatchObject({ limit_usd: 0.123456789012 });
    await gw.call("DELETE", `/guardrails/${String(created.body.data?.id)}`);
  });

  it("clears a setting sent as null back to its default", async () => {
    const created = await gw.call("POST", "/guardrails", {
      body: {
        name: "Clearable",
        content_filters: [{ pattern: "secret-[0-9]+", action: "redact" }],
        content_filter_builtins: [{ slug: "email", action: "block" }],
        enforce_zdr_openai: true,
        enable_paid_model_training: true,
        disable_response_cache: true,
        allowed_providers: ["alpha"],
      },
    });
    expect(created.status).toBe(201);
    const id = String(created.body.data?.id);
    const cleared = await gw.call("PATCH", `/guardrails/${id}`, {
      body: { content_filters: null, content_filter_builtins: null, enforce_zdr_openai: null, enable_paid_model_training: null, allowed_providers: null },
    });
    expect(cleared.status).toBe(200);
    const defaults = { content_filters: null, content_filter_builtins: [], enforce_zdr_openai: false, enable_paid_model_training: false, allowed_providers: null };
    expect(cleared.body.data).toMatchObject({ ...defaults, disable_response_cache: true });
    expect((await gw.call("GET", `/guardrails/${id}`)).body.data).toMatchObject({ ...defaults, disable_response_cache: true });
    // The deprecated switch fills the vendors not given; a vendor given as null is cleared all the same.
    const mixed = await gw.call("PATCH", `/guardrails/${id}`, { body: { enforce_zdr: true, enforce_zdr_google: null, disable_response_cache: null } });
    expect(mixed.body.data).toMatchObject({ enforce_zdr_openai: true, enforce_zdr_google: false, enforce_zdr_xai: true, disable_response_cache: false });
    expect((await gw.call("GET", `/guardrails/${id}`)).body.data).toMatchObject({ enforce_zdr_openai: true, enforce_zdr_google: false, disable_response_cache: false });
    // The deprecated switch sent as null clears the vendors not given, as false does.
    const unset = await gw.call("PATCH", `/guardrails/${id}`, { body: { enforce_zdr: null, enforce_zdr_anthropic: true } });
    expect(unset.body.data).toMatchObject({ enforce_zdr_openai: false, enforce_zdr_anthropic: true, enforce_zdr_xai: false, enforce_zdr_other: false });
  });

  it("rejects invalid input, non-management keys and other organizations", async () => {
    const cases: [string, string, unknown, number][] = [
      ["GET", "/guardrails/not-a-uuid", undefined, 404],
      ["PATCH", "/guardrails/not-a-uuid", { name: "x" }, 404],
      ["DELETE", "/guardrails/not-a-uuid", undefined, 404],
      ["GET", "/guardrails/6f1d7d8e-1b2c-4c3d-9e4f-5a6b7c8d9e0f", undefined, 404],
      ["POST", "/guardrails", { name: "" }, 400],
      ["POST", "/guardrails", { name: "x", limit_usd: 5 }, 400],
      ["POST", "/guardrails", { name: "x", limit_usd: -1, reset_interval: "daily" }, 400],
      ["POST", "/guardrails", { name: "x", limit_usd: 4e-13, reset_interval: "daily" }, 400],
      ["POST", "/guardrails", { name: "x", limit_usd: 1.0000000000001, reset_interval: "daily" }, 400],
      ["POST", "/guardrails", { name: "x", reset_interval: "hourly", limit_usd: 1 }, 400],
      ["POST", "/guardrails", { name: "x", allowed_data_regions: ["mars"] }, 400],
      ["POST", "/guardrails", { name: "x", surprise: true }, 400],
      ["GET", "/guardrails?limit=0", undefined, 400],
    ];
    for (const [method, path, body, status] of cases) {
      const res = await gw.call(method, path, body === undefined ? {} : { body });
      expect(res.status, `${method} ${path} ${JSON.stringify(body)}`).toBe(status);
      expect(res.body.error?.code).toBe(status);
      if (status === 404) expect(res.body.error?.message).toBe("Guardrail not found");
    }
    const g = await gw.call("POST", "/guardrails", { body: { name: "mine" } });
    const id = String(g.body.data?.id);
    const forbidden = await gw.call("GET", `/guardrails/${id}`, { key: inference });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.error?.message).toBe("Only management keys can perform this operation");
    const other = await gw.standalone.identity.createOrganization("Other");
    expect((await gw.call("GET", `/guardrails/${id}`, { key: other.managementKey })).status).toBe(404);
    expect((await gw.call("PATCH", `/guardrails/${id}`, { key: other.managementKey, body: { name: "x" } })).status).toBe(404);
    // Keys of another organization cannot be assigned.
    const theirKey = await gw.call("POST", "/keys", { key: other.managementKey, body: { name: "theirs" } });
    const assign = await gw.call("POST", `/guardrails/${id}/assignments/keys`, { body: { key_hashes: [String(theirKey.body.data?.hash)] } });
    expect(assign.status).toBe(400);
  });

  it("lists key assignments with the keys' names", async () => {
    const g = await gw.call("POST", "/guardrails", { body: { name: "assigned" } });
    const id = String(g.body.data?.id);
    const key = await gw.call("POST", "/keys", { body: { name: "worker key" } });
    const hash = String(key.body.data?.hash);
    expect((await gw.call("POST", `/guardrails/${id}/assignments/keys`, { body: { key_hashes: [hash, hash] } })).body).toEqual({ assigned_count: 1 });
    expect((await gw.call("POST", `/guardrails/${id}/assignments/keys`, { body: { key_hashes: [hash] } })).body).toEqual({ assigned_count: 0 });
    const listed = await gw.call("GET", `/guardrails/${id}/assignments/keys`);
    expect(listed.body).toMatchObject({ total_count: 1, data: [{ guardrail_id: id, key_hash: hash, key_name: "worker key" }] });
    const all = await gw.call("GET", "/guardrails/assignments/keys");
    expect((all.body.data as unknown as Array<{ key_hash: string }>).map((a) => a.key_hash)).toContain(hash);
    expect((await gw.call("POST", `/guardrails/${id}/assignments/keys/remove`, { body: { key_hashes: [hash] } })).body).toEqual({ unassigned_count: 1 });
    expect((await gw.call("POST", `/guardrails/${id}/assignments/keys`, { body: { key_hashes: ["zz"] } })).status).toBe(400);
  });
});
