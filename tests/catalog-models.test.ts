import { writeFile } from "node:fs/promises";
import { OpenRouter } from "@openrouter/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { eventually } from "./support/eventually.js";
import { bootstrapKey, startTestGateway, type TestGateway } from "./support/gateway.js";

let gw: TestGateway;
let key: string;
let keyHash: string;
beforeAll(async () => {
  gw = await startTestGateway(await catalogEnv());
  const made = await gw.call("POST", "/keys", { body: { name: "models" } });
  key = String(made.body.key);
  keyHash = String(made.body.data?.hash);
});
afterAll(async () => {
  await gw?.stop();
});

const ids = (body: { data?: unknown }) => (body.data as Array<{ id: string }>).map((m) => m.id).sort();

describe("GET /models, /providers, /models/{author}/{slug}/endpoints", () => {
  it("lists the whole catalog with the spec's model record", async () => {
    const res = await gw.call("GET", "/models?output_modalities=all", { key });
    expect(res.status).toBe(200);
    expect(ids(res.body)).toEqual(["openai/x", "vendor/a", "vendor/b", "vendor/c", "vendor/img"]);
    const a = (res.body.data as unknown as Array<Record<string, unknown>>).find((m) => m.id === "vendor/a");
    expect(a).toMatchObject({
      canonical_slug: "vendor/a",
      name: "A",
      created: Date.parse("2025-01-01T00:00:00Z") / 1000,
      context_length: 8000,
      architecture: { input_modalities: ["text"], output_modalities: ["text"], modality: "text->text", tokenizer: "Other", instruct_type: null },
      pricing: { prompt: "0.000001", completion: "0.000002", image: "0", request: "0" },
      supported_parameters: ["temperature", "tool_choice", "tools"],
      links: { details: "/api/v1/models/vendor/a/endpoints" },
      default_parameters: null,
      expiration_date: null,
      per_request_limits: null,
      supported_voices: null,
    });
    expect(ids(await gw.call("GET", "/models", { key }).then((r) => r.body))).not.toContain("vendor/img");
  });

  it("lists providers (with or without keys) and a model's usable endpoints", async () => {
    const providers = await gw.call("GET", "/providers", { key });
    // Which have a key the gateway holds, and which requests can go to (gamma has none; local needs none).
    expect((providers.body.data as unknown as Array<{ slug: string; has_api_key: boolean; usable: boolean }>).map((p) => [p.slug, p.has_api_key, p.usable])).toEqual([
      ["alpha", true, true],
      ["beta", true, true],
      ["gamma", false, false],
      ["local", false, true],
    ]);
    const endpoints = await gw.call("GET", "/models/vendor/a/endpoints", { key });
    expect(endpoints.status).toBe(200);
    const list = (endpoints.body.data as unknown as { endpoints: Array<{ tag: string; pricing: { prompt: string } }> }).endpoints;
    expect(list.map((e) => e.tag)).toEqual(["alpha", "beta"]);
    const c = await gw.call("GET", "/models/vendor/c/endpoints", { key });
    expect((c.body.data as unknown as { endpoints: unknown[] }).endpoints).toEqual([]);
    expect((await gw.call("GET", "/models/vendor/nope/endpoints", { key })).status).toBe(404);
  });
});

describe("catalog reload", () => {
  it("re-reads the operator file on a management call and keeps the old catalog when the new one is invalid", async () => {
    const env = await catalogEnv();
    const other = await startTestGateway(env);
    try {
      const path = env.SWITCHYARD_CONFIG!;
      const { fixtureCatalog } = await import("./support/catalog-fixture.js");
      await writeFile(path, JSON.stringify({ ...fixtureCatalog, models: fixtureCatalog.models.slice(0, 1) }));
      const inference = String((await other.call("POST", "/keys", { body: { name: "r" } })).body.key);
      expect((await other.call("POST", "/catalog/reload", { key: inference })).status).toBe(403);
      const reloaded = await other.call("POST", "/catalog/reload");
      expect(reloaded.body).toEqual({ data: { models: 1, providers: 4 } });
      expect(ids((await other.call("GET", "/models?output_modalities=all")).body)).toEqual(["vendor/a"]);
      // A file the operator got wrong is the request's problem, not the gateway's: a 400 that says what is wrong.
      await writeFile(path, "providers: [");
      const refused = await other.call("POST", "/catalog/reload");
      expect(refused.status).toBe(400);
      expect(refused.body.error?.message).toMatch(/not valid YAML or JSON[\s\S]*previous catalog stays in place/);
      await writeFile(path, JSON.stringify({ ...fixtureCatalog, models: [{ ...fixtureCatalog.models[0]!, context_length: -1 }] }));
      const invalid = await other.call("POST", "/catalog/reload");
      expect(invalid.status).toBe(400);
      expect(invalid.body.error?.message).toMatch(/^Invalid catalog in .*\n {2}models\.0\.context_length: .*\nThe previous catalog stays in place\.$/);
      expect(ids((await other.call("GET", "/models?output_modalities=all")).body)).toEqual(["vendor/a"]);
    } finally {
      await other.stop();
    }
  });
});

describe("GET /models/user", () => {
  it("shows only usable models, filtered by output modality", async () => {
    expect(ids((await gw.call("GET", "/models/user", { key })).body)).toEqual(["openai/x", "vendor/a", "vendor/b"]);
    expect(ids((await gw.call("GET", "/models/user?output_modalities=image", { key })).body)).toEqual(["vendor/img"]);
    expect(ids((await gw.call("GET", "/models/user?output_modalities=text,image", { key })).body)).toHaveLength(4);
    expect((await gw.call("GET", "/models/user?output_modalities=all", { key })).body.total_count).toBe(4);
  });

  it("paginates with offset and limit, and links.next walks every model once", async () => {
    const full = await gw.call("GET", "/models/user?output_modalities=all", { key });
    expect(full.body.links).toEqual({ next: null });
    const seen: string[] = [];
    let path: string | null = "/models/user?output_modalities=all&limit=1&offset=0";
    while (path) {
      const res = await gw.call("GET", path, { key });
      expect(res.body.total_count).toBe(4);
      seen.push(...ids(res.body));
      const next = (res.body.links as { next: string | null }).next;
      path = next ? next.replace("/api/v1", "") : null;
    }
    expect(seen.sort()).toEqual(ids(full.body));
  });

  it("rejects invalid parameters", async () => {
    for (const q of ["limit=0", "limit=1001", "offset=-1", "offset=x", "output_modalities=smell", "output_modalities=text,nope"]) {
      const res = await gw.call("GET", `/models/user?${q}`, { key });
      expect(res.status, q).toBe(400);
      expect(res.body.error?.code).toBe(400);
    }
  });

  it("honours the workspace's provider preferences and privacy settings", async () => {
    const workspaces = await gw.call("GET", "/workspaces");
    const ws = (workspaces.body.data as unknown as Array<{ id: string; is_default: boolean }>).find((w) => w.is_default)!;
    await gw.call("PATCH", `/workspaces/${ws.id}`, { body: { data_collection: "deny" } });
    // beta trains on data: vendor/b (beta only) goes, vendor/a stays through alpha.
    await eventually(async () => !ids((await gw.call("GET", "/models/user", { key })).body).includes("vendor/b"));
    await gw.call("PATCH", `/workspaces/${ws.id}`, { body: { data_collection: "allow", zdr: true } });
    await eventually(async () => JSON.stringify(ids((await gw.call("GET", "/models/user", { key })).body)) === JSON.stringify(["openai/x"]));
    await gw.call("PATCH", `/workspaces/${ws.id}`, { body: { zdr: false, ignored_providers: ["alpha"] } });
    await eventually(async () => JSON.stringify(ids((await gw.call("GET", "/models/user", { key })).body)) === JSON.stringify(["openai/x", "vendor/a", "vendor/b"]));
    const x = ((await gw.call("GET", "/models/user", { key })).body.data as unknown as Array<{ id: string; pricing: { prompt: string } }>).find((m) => m.id === "openai/x");
    expect(x?.pricing.prompt).toBe("0"); // priced from the endpoint it may use (local), not alpha
    await gw.call("PATCH", `/workspaces/${ws.id}`, { body: { ignored_providers: null } });
    await eventually(async () => ids((await gw.call("GET", "/models/user", { key })).body).length === 3);
  });

  it("sees only in-region models on a regional hostname", async () => {
    const res = await gw.call("GET", "/models/user", { key, headers: { "x-forwarded-host": "eu.localhost" } });
    expect(ids(res.body)).toEqual(["vendor/a", "vendor/b"]);
  });

  it("applies the guardrails assigned to the key, at once", async () => {
    const g = await gw.call("POST", "/guardrails", { body: { name: "only a", allowed_models: ["vendor/a"], enable_paid_model_training: true } });
    expect(g.status).toBe(201);
    const id = String(g.body.data?.id);
    expect((await gw.call("POST", `/guardrails/${id}/assignments/keys`, { body: { key_hashes: [keyHash] } })).body).toEqual({ assigned_count: 1 });
    expect(ids((await gw.call("GET", "/models/user", { key })).body)).toEqual(["vendor/a"]);
    await gw.call("PATCH", `/guardrails/${id}`, { body: { allowed_models: null, ignored_providers: ["alpha"] } });
    expect(ids((await gw.call("GET", "/models/user", { key })).body)).toEqual(["openai/x", "vendor/a", "vendor/b"]);
    await gw.call("PATCH", `/guardrails/${id}`, { body: { enable_paid_model_training: false } });
    expect(ids((await gw.call("GET", "/models/user", { key })).body)).toEqual(["openai/x"]);
    await gw.call("POST", `/guardrails/${id}/assignments/keys/remove`, { body: { key_hashes: [keyHash] } });
    expect(ids((await gw.call("GET", "/models/user", { key })).body)).toEqual(["openai/x", "vendor/a", "vendor/b"]);
  });

  it("passes the official client's validation", async () => {
    const client = new OpenRouter({ apiKey: key, serverURL: gw.apiUrl });
    const page = await client.models.listForUser({ bearer: key }, {});
    expect(page.result.data.map((m) => m.id).sort()).toEqual(["openai/x", "vendor/a", "vendor/b"]);
    expect(page.result.totalCount).toBe(3);
    const admin = new OpenRouter({ apiKey: bootstrapKey, serverURL: gw.apiUrl });
    const providers = await admin.providers.list();
    expect(providers.data).toHaveLength(4);
  });
});
