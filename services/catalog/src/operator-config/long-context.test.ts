import { describe, expect, it } from "vitest";
import { loadCatalog, parseCatalog } from "./load.js";

const catalogWith = (longContext: unknown, endpointContext?: number) => ({
  providers: [{ slug: "p", name: "P", adapter: "openai", base_url: "http://127.0.0.1:9/v1" }],
  models: [
    {
      id: "v/m",
      name: "M",
      context_length: 1000,
      endpoints: [{ provider: "p", upstream_model: "m", pricing: { prompt: "0.000001", completion: "0.000002" }, long_context: longContext, ...(endpointContext ? { context_length: endpointContext } : {}) }],
    },
  ],
});
const path = "models.0.endpoints.0.long_context";

describe("long-context prices in the catalog", () => {
  it("takes a threshold and the prices above it", () => {
    const config = parseCatalog(catalogWith({ above_prompt_tokens: 500, pricing: { prompt: "0.000002", input_cache_read: "0.0000002" } }), "test.yaml");
    expect(config.models[0]!.endpoints[0]!.long_context).toEqual({ above_prompt_tokens: 500, pricing: { prompt: "0.000002", input_cache_read: "0.0000002" } });
  });

  it("refuses a threshold that is not a positive whole number", () => {
    expect(() => parseCatalog(catalogWith({ above_prompt_tokens: 0, pricing: { prompt: "0.000002" } }), "test.yaml")).toThrow(`${path}.above_prompt_tokens`);
    expect(() => parseCatalog(catalogWith({ above_prompt_tokens: 10.5, pricing: { prompt: "0.000002" } }), "test.yaml")).toThrow(`${path}.above_prompt_tokens`);
  });

  it("refuses a threshold at or above the endpoint's context length, its own or its model's", () => {
    expect(() => parseCatalog(catalogWith({ above_prompt_tokens: 1000, pricing: { prompt: "0.000002" } }), "test.yaml")).toThrow(
      `${path}.above_prompt_tokens: must be below the endpoint's context_length (1000)`,
    );
    expect(() => parseCatalog(catalogWith({ above_prompt_tokens: 600, pricing: { prompt: "0.000002" } }, 600), "test.yaml")).toThrow(
      `${path}.above_prompt_tokens: must be below the endpoint's context_length (600)`,
    );
  });

  it("refuses prices that set nothing, a price that is not a decimal, and a key it does not know", () => {
    expect(() => parseCatalog(catalogWith({ above_prompt_tokens: 500, pricing: {} }), "test.yaml")).toThrow(`${path}.pricing: must set at least one price`);
    expect(() => parseCatalog(catalogWith({ above_prompt_tokens: 500, pricing: { prompt: "dear" } }), "test.yaml")).toThrow(`${path}.pricing.prompt`);
    expect(() => parseCatalog(catalogWith({ above_prompt_tokens: 500, pricing: { request: "0.01" } }), "test.yaml")).toThrow(`${path}.pricing`);
    expect(() => parseCatalog(catalogWith({ above_prompt_tokens: 500, pricing: { prompt: "0.000002" }, above: 3 }), "test.yaml")).toThrow(path);
  });

  it("ships Gemini 2.5 Pro and Grok 4 with their providers' long-context prices", async () => {
    const catalog = await loadCatalog(undefined);
    const longContextOf = (id: string) => catalog.models.find((m) => m.id === id)?.endpoints[0]?.long_context;
    expect(longContextOf("google/gemini-2.5-pro")).toEqual({ above_prompt_tokens: 200_000, pricing: { prompt: "0.0000025", completion: "0.000015", input_cache_read: "0.00000025" } });
    expect(longContextOf("x-ai/grok-4")).toEqual({ above_prompt_tokens: 128_000, pricing: { prompt: "0.000006", completion: "0.00003" } });
  });
});
