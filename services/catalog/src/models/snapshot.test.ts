import { workspacePolicy } from "@switchyard/contracts";
import { HttpError } from "@switchyard/runtime";
import { describe, expect, it } from "vitest";
import type { CatalogDeps } from "../deps.js";
import { parseCatalog } from "../operator-config/load.js";
import { resolveModel } from "../policy/resolve-model.js";
import { buildSnapshot, type CatalogSnapshot } from "./snapshot.js";

const pricing = { prompt: "0.000003", completion: "0.000015" };

/** Anthropic's models served by Anthropic and by a cloud under other names, and clashes of names. */
const catalog = {
  providers: [
    { slug: "anthropic", name: "Anthropic", adapter: "anthropic", base_url: "https://api.anthropic.com/v1", requires_api_key: false },
    { slug: "cloud", name: "Cloud", adapter: "anthropic", base_url: "https://cloud.example/v1", requires_api_key: false },
    { slug: "other", name: "Other", adapter: "openai-compatible", base_url: "https://other.example/v1", requires_api_key: false },
  ],
  models: [
    {
      id: "anthropic/claude-sonnet-4.5",
      name: "Claude Sonnet 4.5",
      context_length: 200000,
      endpoints: [
        { provider: "anthropic", upstream_model: "claude-sonnet-4-5-20250929", pricing },
        { provider: "cloud", upstream_model: "claude-sonnet-4-5@20250929", pricing: { prompt: "0.000002", completion: "0.00001" } },
      ],
    },
    // Also serves Sonnet 4.5's upstream name: the first model configured keeps the alias.
    { id: "anthropic/claude-sonnet-4.5-fast", name: "Fast", context_length: 200000, endpoints: [{ provider: "cloud", upstream_model: "claude-sonnet-4-5-20250929", pricing }] },
    // An endpoint's upstream name that is another model's id: the id wins.
    { id: "anthropic/claude-opus-4", name: "Claude Opus 4", context_length: 200000, endpoints: [{ provider: "anthropic", upstream_model: "claude-opus-4-20250514", pricing }] },
    { id: "anthropic/claude-proxy", name: "Proxy", context_length: 200000, endpoints: [{ provider: "cloud", upstream_model: "claude-opus-4", pricing }] },
    // Another vendor's model of the same upstream name is known under its own vendor only.
    { id: "other/claude-sonnet-4.5", name: "Other", context_length: 100000, endpoints: [{ provider: "other", upstream_model: "claude-sonnet-4-5-20250929", pricing }] },
  ],
};

const snapshotOf = (config: object = catalog): CatalogSnapshot => buildSnapshot(parseCatalog(config, "test"), {}, Date.UTC(2026, 0, 1));

describe("modelsByUpstream", () => {
  it("names each model by its vendor and the upstream names of its endpoints", () => {
    const snapshot = snapshotOf();
    const aliases = Object.fromEntries([...snapshot.modelsByUpstream].map(([alias, model]) => [alias, model.id]));
    expect(aliases).toEqual({
      "anthropic/claude-sonnet-4-5-20250929": "anthropic/claude-sonnet-4.5",
      "anthropic/claude-sonnet-4-5@20250929": "anthropic/claude-sonnet-4.5",
      "anthropic/claude-opus-4-20250514": "anthropic/claude-opus-4",
      "other/claude-sonnet-4-5-20250929": "other/claude-sonnet-4.5",
    });
    expect(snapshot.modelsByUpstream.get("anthropic/claude-sonnet-4-5-20250929")).toBe(snapshot.modelsById.get("anthropic/claude-sonnet-4.5"));
    // A model id is never an alias, even where an endpoint's upstream name spells it.
    expect(snapshot.modelsByUpstream.has("anthropic/claude-opus-4")).toBe(false);
    expect(snapshot.modelsById.get("anthropic/claude-opus-4")?.name).toBe("Claude Opus 4");
  });

  it("gives a clash to the first model configured", () => {
    const reordered = { ...catalog, models: [catalog.models[1]!, catalog.models[0]!] };
    expect(snapshotOf(reordered).modelsByUpstream.get("anthropic/claude-sonnet-4-5-20250929")?.id).toBe("anthropic/claude-sonnet-4.5-fast");
  });
});

describe("resolveModel by an upstream name", () => {
  const workspace = workspacePolicy.parse({ id: "ws-1", organization_id: "org-1", allowed_providers: null, ignored_providers: null, data_collection: "allow", zdr: false });
  const depsFor = (snapshot: CatalogSnapshot) =>
    ({
      catalog: { current: () => snapshot, reload: async () => snapshot },
      identity: { workspacePolicy: async () => workspace },
      guardrails: { forKey: async () => [] },
    }) as unknown as CatalogDeps;
  const resolve = (model: string, snapshot = snapshotOf()) => resolveModel(depsFor(snapshot), { model, keyHash: "0".repeat(64), workspaceId: "ws-1", organizationId: "org-1" });

  it("finds the model one of whose endpoints serves it, with all that model's endpoints", async () => {
    const resolved = await resolve("anthropic/claude-sonnet-4-5-20250929");
    expect(resolved).toMatchObject({ requested: "anthropic/claude-sonnet-4-5-20250929", model: "anthropic/claude-sonnet-4.5", variant: null, excluded: [] });
    expect(resolved.endpoints.map((e) => [e.provider, e.upstream_model])).toEqual([
      ["anthropic", "claude-sonnet-4-5-20250929"],
      ["cloud", "claude-sonnet-4-5@20250929"],
    ]);
    expect((await resolve("anthropic/claude-opus-4-20250514")).model).toBe("anthropic/claude-opus-4");
    expect((await resolve("other/claude-sonnet-4-5-20250929")).model).toBe("other/claude-sonnet-4.5");
  });

  it("prefers a real id over an alias, and takes a variant after an alias", async () => {
    expect((await resolve("anthropic/claude-opus-4")).model).toBe("anthropic/claude-opus-4");
    expect(await resolve("anthropic/claude-sonnet-4-5-20250929:floor")).toMatchObject({ model: "anthropic/claude-sonnet-4.5", variant: "floor", sort: "price" });
  });

  it("does not find an upstream name under another vendor", async () => {
    const failure = await resolve("google/claude-sonnet-4-5-20250929").catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(HttpError);
    expect(failure).toMatchObject({ status: 404, message: "Model google/claude-sonnet-4-5-20250929 not found" });
  });
});
