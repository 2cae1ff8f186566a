import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv, fixtureCatalog } from "./support/catalog-fixture.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";

let gw: TestGateway;
let key: string;
let caller: { keyHash: string; workspaceId: string; organizationId: string };
beforeAll(async () => {
  gw = await startTestGateway(await catalogEnv());
  const made = await gw.call("POST", "/keys", { body: { name: "policy" } });
  key = String(made.body.key);
  const me = await gw.call("GET", "/key", { key });
  caller = { keyHash: String(me.body.data?.hash), workspaceId: String(me.body.data?.workspace_id), organizationId: String(me.body.data?.organization_id) };
});
afterAll(async () => {
  await gw?.stop();
});

const usable = new Set(["alpha", "beta", "local"]);
const providers = ["alpha", "beta", "gamma", "local"];
const models = fixtureCatalog.models.filter((m) => m.output_modalities === undefined).map((m) => m.id);

describe("GET /models/user under guardrails (property)", () => {
  it("never lists a model whose every endpoint a guardrail forbids, and lists every other usable model", async () => {
    const subset = <T>(items: T[]) => fc.option(fc.subarray(items), { nil: null });
    await fc.assert(
      fc.asyncProperty(
        fc.record({ allowed_providers: subset(providers), ignored_providers: subset(providers), allowed_models: subset(models), ignored_models: subset(models) }),
        async (rules) => {
          const g = await gw.call("POST", "/guardrails", { body: { name: "random", enable_paid_model_training: true, ...rules } });
          const id = String(g.body.data?.id);
          await gw.call("POST", `/guardrails/${id}/assignments/keys`, { body: { key_hashes: [caller.keyHash] } });
          const listed = ((await gw.call("GET", "/models/user", { key })).body.data as unknown as Array<{ id: string }>).map((m) => m.id).sort();
          await gw.call("DELETE", `/guardrails/${id}`);
          const expected = fixtureCatalog.models
            .filter((m) => m.output_modalities === undefined)
            .filter((m) =>
              m.endpoints.some(
                (e) =>
                  usable.has(e.provider) &&
                  (!rules.allowed_providers || rules.allowed_providers.includes(e.provider)) &&
                  !rules.ignored_providers?.includes(e.provider) &&
                  (!rules.allowed_models || rules.allowed_models.includes(m.id)) &&
                  !rules.ignored_models?.includes(m.id),
              ),
            )
            .map((m) => m.id)
            .sort();
          expect(listed).toEqual(expected);
        },
      ),
      { numRuns: 40 },
    );
  });
});

describe("model resolution for inference", () => {
  it("resolves variants and explains exclusions", async () => {
    const resolve = (model: string, host?: string) => gw.standalone.catalog.resolveModel({ model, ...caller, ...(host ? { host } : {}) });
    const plain = await resolve("vendor/a");
    expect(plain).toMatchObject({ model: "vendor/a", variant: null, sort: null, preset: null });
    expect(plain.endpoints.map((e) => [e.provider, e.upstream_model, e.pricing.prompt])).toEqual([
      ["alpha", "a", "0.000002"],
      ["beta", "a-beta", "0.000001"],
    ]);
    expect((await resolve("vendor/a:floor")).sort).toBe("price");
    expect((await resolve("vendor/a:nitro")).sort).toBe("throughput");
    const free = await resolve("openai/x:free");
    expect(free.endpoints.map((e) => e.provider)).toEqual(["local"]);
    expect(free.excluded).toEqual([{ provider: "alpha", reason: "not free" }]);
    const c = await resolve("vendor/c");
    expect(c.endpoints).toEqual([]);
    expect(c.excluded[0]?.reason).toMatch(/no API key/);
    const eu = await resolve("openai/x", "eu.localhost");
    expect(eu.endpoints).toEqual([]);
    expect(eu.excluded.map((e) => e.reason)).toEqual(["endpoint is in region us, not europe", "endpoint is in region us, not europe"]);
    await expect(resolve("vendor/a:turbo")).rejects.toMatchObject({ status: 400 });
    await expect(resolve("vendor/zzz")).rejects.toMatchObject({ status: 404 });
  });
});
