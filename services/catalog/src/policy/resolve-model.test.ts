import { workspacePolicy } from "@switchyard/contracts";
import { describe, expect, it } from "vitest";
import type { CatalogDeps } from "../deps.js";
import { buildSnapshot } from "../models/snapshot.js";
import { parseCatalog } from "../operator-config/load.js";
import { resolveModel } from "./resolve-model.js";

const zero = { prompt: "0", completion: "0" };
const endpoint = (pricing: Record<string, string>) => ({ provider: "p", upstream_model: "m", pricing: { ...zero, ...pricing } });
const model = (id: string, output: string, pricing: Record<string, string>) => ({
  id,
  name: id,
  context_length: 1000,
  input_modalities: ["text"],
  output_modalities: [output],
  endpoints: [endpoint(pricing)],
});

/** One model per unit a price can be billed in, each free but for that one price. */
const catalog = {
  providers: [{ slug: "p", name: "P", adapter: "openai-compatible", base_url: "https://p.example/v1", requires_api_key: false }],
  models: [
    model("free/chat", "text", {}),
    model("free/rerank", "rerank", { search_unit: "0" }),
    model("paid/chat", "text", { completion: "0.000001" }),
    model("paid/request", "text", { request: "0.001" }),
    model("paid/whisper", "transcription", { audio_second: "0.0001" }),
    model("paid/audio-tokens", "transcription", { audio: "0.000006" }),
    model("paid/tts", "speech", { character: "0.000015" }),
    model("paid/tts-tokens", "speech", { audio_output: "0.000012" }),
    model("paid/rerank", "rerank", { search_unit: "0.002" }),
    model("paid/image", "image", { image_output: "0.04" }),
    model("paid/reference", "image", { image: "0.01" }),
    model("paid/cache", "text", { input_cache_write: "0.000001" }),
    model("paid/reasoning", "text", { internal_reasoning: "0.000001" }),
    model("paid/search", "text", { web_search: "0.01" }),
  ],
};

const snapshot = buildSnapshot(parseCatalog(catalog, "test"), {}, Date.UTC(2026, 0, 1));
const workspace = workspacePolicy.parse({ id: "ws-1", organization_id: "org-1", allowed_providers: null, ignored_providers: null, data_collection: "allow", zdr: false });
const deps = {
  catalog: { current: () => snapshot, reload: async () => snapshot },
  identity: { workspacePolicy: async () => workspace },
  guardrails: { forKey: async () => [] },
} as unknown as CatalogDeps;
const resolve = (model: string) => resolveModel(deps, { model, keyHash: "0".repeat(64), workspaceId: "ws-1", organizationId: "org-1" });

describe("the :free variant", () => {
  it("keeps an endpoint whose every price is zero", async () => {
    for (const id of ["free/chat:free", "free/rerank:free"]) {
      const resolved = await resolve(id);
      expect(resolved).toMatchObject({ variant: "free", excluded: [] });
      expect(resolved.endpoints.map((e) => e.provider)).toEqual(["p"]);
    }
  });

  it.each(catalog.models.filter((m) => m.id.startsWith("paid/")).map((m) => [m.id, Object.keys(m.endpoints[0]!.pricing).at(-1)!]))(
    "excludes %s, which bills %s, as not free",
    async (id) => {
      const resolved = await resolve(`${id}:free`);
      expect(resolved.endpoints).toEqual([]);
      expect(resolved.excluded).toEqual([{ provider: "p", reason: "not free" }]);
      // Without the variant the same endpoint serves.
      expect((await resolve(id)).endpoints.map((e) => e.provider)).toEqual(["p"]);
    },
  );
});

describe("guardrails' free-endpoint settings", () => {
  it("count an endpoint as free only when every price it bills is zero", async () => {
    const training = {
      providers: [{ slug: "t", name: "T", adapter: "openai-compatible", base_url: "https://t.example/v1", requires_api_key: false, data_policy: { training: true } }],
      models: [
        { ...model("free/chat", "text", {}), endpoints: [{ ...endpoint({}), provider: "t" }] },
        { ...model("paid/whisper", "transcription", {}), endpoints: [{ ...endpoint({ audio_second: "0.0001" }), provider: "t" }] },
      ],
    };
    const trained = buildSnapshot(parseCatalog(training, "test"), {}, Date.UTC(2026, 0, 1));
    const guardrail = { id: "g-1", allowed_providers: null, ignored_providers: null, allowed_models: null, ignored_models: null, allowed_data_regions: null, enforce_zdr: null, settings: { enable_free_model_training: false, enable_paid_model_training: true } };
    const guarded = { ...deps, catalog: { current: () => trained, reload: async () => trained }, guardrails: { forKey: async () => [guardrail] } } as unknown as CatalogDeps;
    const resolveGuarded = (id: string) => resolveModel(guarded, { model: id, keyHash: "0".repeat(64), workspaceId: "ws-1", organizationId: "org-1" });
    // Billed per second of audio, whisper is a paid endpoint, which the guardrail lets train.
    expect((await resolveGuarded("paid/whisper")).endpoints.map((e) => e.provider)).toEqual(["t"]);
    expect((await resolveGuarded("free/chat")).endpoints).toEqual([]);
  });
});

describe("guardrails' model lists", () => {
  const guarded = (lists: { allowed_models?: string[]; ignored_models?: string[] }) => {
    const guardrail = { id: "g-1", name: "models", allowed_providers: null, ignored_providers: null, allowed_models: null, ignored_models: null, allowed_data_regions: null, enforce_zdr: null, settings: {}, ...lists };
    const withGuardrail = { ...deps, guardrails: { forKey: async () => [guardrail] } } as unknown as CatalogDeps;
    return async (id: string) => (await resolveModel(withGuardrail, { model: id, keyHash: "0".repeat(64), workspaceId: "ws-1", organizationId: "org-1" })).endpoints.length;
  };

  it("bind a variant named in them: ignored, that variant is refused; allowed, only it is served", async () => {
    const ignoring = guarded({ ignored_models: ["paid/chat:floor", "free/chat:free"] });
    expect(await ignoring("paid/chat:floor")).toBe(0);
    expect(await ignoring("free/chat:free")).toBe(0);
    expect(await ignoring("paid/chat")).toBe(1);
    expect(await ignoring("paid/chat:nitro")).toBe(1);
    const allowing = guarded({ allowed_models: ["paid/chat:nitro"] });
    expect(await allowing("paid/chat:nitro")).toBe(1);
    expect(await allowing("paid/chat")).toBe(0);
    expect(await allowing("paid/chat:floor")).toBe(0);
    // A model named without a variant covers its variants.
    expect(await guarded({ allowed_models: ["paid/chat"] })("paid/chat:floor")).toBe(1);
    expect(await guarded({ ignored_models: ["paid/chat"] })("paid/chat:nitro")).toBe(0);
  });
});
