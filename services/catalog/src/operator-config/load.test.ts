import { describe, expect, it } from "vitest";
import { fixtureCatalog } from "../../../../tests/support/catalog-fixture.js";
import { buildSnapshot, envName } from "../models/snapshot.js";
import { loadCatalog, parseCatalog } from "./load.js";

describe("operator catalog", () => {
  it("ships a default catalog that validates", async () => {
    const catalog = await loadCatalog(undefined);
    expect(catalog.providers.map((p) => p.slug)).toEqual(
      expect.arrayContaining(["openai", "anthropic", "google", "mistral", "groq", "deepseek", "xai", "together", "fireworks", "openrouter", "ollama"]),
    );
    expect(catalog.models.length).toBeGreaterThan(20);
  });

  it("names the offending path of every problem", () => {
    const bad = structuredClone(fixtureCatalog) as unknown as { models: Array<{ endpoints: Array<Record<string, unknown>> }>; providers: Array<Record<string, unknown>> };
    bad.models[0]!.endpoints[0]!.pricing = { prompt: "cheap", completion: "0" };
    bad.providers[0]!.adapter = "carrier-pigeon";
    expect(() => parseCatalog(bad, "test.yaml")).toThrow(/models\.0\.endpoints\.0\.pricing\.prompt/);
    expect(() => parseCatalog(bad, "test.yaml")).toThrow(/providers\.0\.adapter/);
    // Cross-references are checked once every value is well-formed.
    const dangling = structuredClone(fixtureCatalog) as unknown as { models: Array<{ endpoints: Array<Record<string, unknown>> }> };
    dangling.models[1]!.endpoints[0]!.provider = "nobody";
    expect(() => parseCatalog(dangling, "test.yaml")).toThrow(/models\.1\.endpoints\.0\.provider: unknown provider nobody/);
  });

  it("refuses a price the gateway could not charge or hold: finer than 1e-12 USD, or above 1000 USD a unit", () => {
    const priced = (pricing: Record<string, string>) => {
      const catalog = structuredClone(fixtureCatalog) as unknown as { models: Array<{ endpoints: Array<Record<string, unknown>> }> };
      catalog.models[0]!.endpoints[0]!.pricing = pricing;
      return () => parseCatalog(catalog, "test.yaml");
    };
    expect(priced({ prompt: "0.0000000000000000001", completion: "0.00001" })).toThrow(/pricing\.prompt: must be a non-negative decimal string with at most 12 decimal places/);
    expect(priced({ prompt: "0.000001", completion: "99999999999" })).toThrow(/pricing\.completion: must be at most 1000 USD per unit/);
    expect(priced({ prompt: "0.000000000001", completion: "1000" })).not.toThrow();
  });

  it("reads provider keys and base URLs from the environment", () => {
    const config = parseCatalog(fixtureCatalog, "fixture");
    const snapshot = buildSnapshot(config, { ALPHA_KEY: "k1", BETA_BASE_URL: "http://beta.internal/v1", GAMMA_API_KEY: "" });
    const bySlug = snapshot.providersBySlug;
    expect(bySlug.get("alpha")).toMatchObject({ apiKey: "k1", usable: true });
    expect(bySlug.get("beta")).toMatchObject({ base_url: "http://beta.internal/v1", usable: false });
    expect(bySlug.get("gamma")?.usable).toBe(false);
    expect(bySlug.get("local")?.usable).toBe(true);
    expect(envName("my-provider.eu", "API_KEY")).toBe("MY_PROVIDER_EU_API_KEY");
  });
});
