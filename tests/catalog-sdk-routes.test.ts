import { OpenRouter } from "@openrouter/sdk";
import { NotFoundResponseError } from "@openrouter/sdk/models/errors";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv, fixtureCatalog } from "./support/catalog-fixture.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";

/**
 * The fixture plus what image discovery and zero data retention turn on: vendor/duo draws through an
 * OpenAI-format provider (alpha), a Gemini one that retains nothing (gem) and one without a key (gamma);
 * vendor/sketch outputs images only on an adapter that cannot make them.
 */
const catalog = {
  ...fixtureCatalog,
  providers: [
    ...fixtureCatalog.providers,
    { slug: "gem", name: "Gem", adapter: "google", base_url: "http://127.0.0.1:9/v1beta", requires_api_key: false, data_policy: { zdr: true } },
    { slug: "claude", name: "Claude", adapter: "anthropic", base_url: "http://127.0.0.1:9/v1", requires_api_key: false },
  ],
  models: [
    ...fixtureCatalog.models,
    {
      id: "vendor/duo",
      name: "Duo",
      description: "Draws and writes.",
      created: "2025-06-01",
      context_length: 32000,
      input_modalities: ["text", "image"],
      output_modalities: ["image", "text"],
      endpoints: [
        { provider: "alpha", upstream_model: "duo", pricing: { prompt: "0.000005", completion: "0.00004", image_output: "0.02" } },
        { provider: "gem", upstream_model: "duo-gem", pricing: { prompt: "0.0000003", completion: "0.00003" } },
        { provider: "gamma", upstream_model: "duo", pricing: { prompt: "0", completion: "0", image_output: "0.01" } },
      ],
    },
    {
      id: "vendor/long",
      name: "Long",
      context_length: 400000,
      endpoints: [
        {
          provider: "alpha",
          upstream_model: "long",
          pricing: { prompt: "0.00000125", completion: "0.00001", internal_reasoning: "0.00002", web_search: "0.01" },
          long_context: { above_prompt_tokens: 200000, pricing: { prompt: "0.0000025", completion: "0.000015", internal_reasoning: "0.00003" } },
        },
      ],
    },
    {
      id: "vendor/sketch",
      name: "Sketch",
      context_length: 1000,
      output_modalities: ["image"],
      endpoints: [{ provider: "claude", upstream_model: "sketch", pricing: { prompt: "0", completion: "0" } }],
    },
  ],
};

let gw: TestGateway;
let key: string;
let sdk: OpenRouter;
beforeAll(async () => {
  gw = await startTestGateway(await catalogEnv(catalog));
  key = String((await gw.call("POST", "/keys", { body: { name: "sdk-routes" } })).body.key);
  sdk = new OpenRouter({ apiKey: key, serverURL: gw.apiUrl });
});
afterAll(async () => {
  await gw?.stop();
});

/** A refusal in the error envelope, with its status as the code. */
async function expectRefused(path: string, status: number, message?: RegExp) {
  const res = await gw.call("GET", path, { key });
  expect(res.status, path).toBe(status);
  expect(res.body.error?.code, path).toBe(status);
  if (message) expect(res.body.error?.message, path).toMatch(message);
}

describe("GET /models/count", () => {
  it("counts what GET /models lists for the same output modalities, text by default", async () => {
    for (const [query, count] of [["", 6], ["?output_modalities=all", 8], ["?output_modalities=image", 3], ["?output_modalities=text,image", 8], ["?output_modalities=embeddings", 0]] as const) {
      const res = await gw.call("GET", `/models/count${query}`, { key });
      expect(res.status, query).toBe(200);
      expect(res.body, query).toEqual({ data: { count } });
      expect((await gw.call("GET", `/models${query}`, { key })).body.total_count, query).toBe(count);
    }
  });

  it("passes the official client's validation", async () => {
    expect((await sdk.models.count()).data.count).toBe(6);
    expect((await sdk.models.count({ outputModalities: "all" })).data.count).toBe(8);
  });

  it("refuses bad modalities with 400 and a missing key with 401", async () => {
    for (const q of ["output_modalities=smell", "output_modalities=text,nope", "output_modalities=text&output_modalities=image"]) await expectRefused(`/models/count?${q}`, 400);
    expect((await gw.call("GET", "/models/count", { key: null })).status).toBe(401);
  });
});

describe("GET /model/{author}/{slug}", () => {
  it("answers the record GET /models lists, also under a provider's own name for the model", async () => {
    const listed = ((await gw.call("GET", "/models?output_modalities=all", { key })).body.data as unknown as Array<{ id: string }>).find((m) => m.id === "vendor/a");
    const one = await gw.call("GET", "/model/vendor/a", { key });
    expect(one.status).toBe(200);
    expect(one.body).toEqual({ data: listed });
    expect((await gw.call("GET", "/model/vendor/a-beta", { key })).body.data?.id).toBe("vendor/a");
  });

  it("passes the official client's validation and raises its not-found error", async () => {
    const got = await sdk.models.get({ author: "vendor", slug: "duo" });
    expect(got.data).toMatchObject({ id: "vendor/duo", canonicalSlug: "vendor/duo", name: "Duo", links: { details: "/api/v1/models/vendor/duo/endpoints" } });
    expect(got.data.architecture.outputModalities).toEqual(["image", "text"]);
    await expect(sdk.models.get({ author: "vendor", slug: "nope" })).rejects.toBeInstanceOf(NotFoundResponseError);
  });

  it("refuses unknown models with 404 and malformed ids with 400", async () => {
    await expectRefused("/model/vendor/nope", 404, /vendor\/nope not found/);
    await expectRefused("/model/vendor", 404);
    await expectRefused("/model/vendor/a/extra", 404);
    await expectRefused("/model/vendor/a%20b", 400, /Invalid path: slug/);
    await expectRefused(`/model/vendor/${"x".repeat(200)}`, 400);
  });
});

describe("the prices the model listings show", () => {
  const listed = async (id: string) => ((await gw.call("GET", "/models?output_modalities=all", { key })).body.data as unknown as Array<{ id: string; pricing: Record<string, unknown> }>).find((m) => m.id === id)!;

  it("prices a model from the endpoints that can be called, not from one whose provider has no key", async () => {
    // vendor/duo's cheapest endpoint is gamma's, whose provider has no key: gem, the cheapest callable one, prices it.
    expect((await listed("vendor/duo")).pricing).toMatchObject({ prompt: "0.0000003", completion: "0.00003" });
    expect((await sdk.models.get({ author: "vendor", slug: "duo" })).data.pricing).toMatchObject({ prompt: "0.0000003", completion: "0.00003" });
  });

  it("shows image output, reasoning and web search prices, and a long prompt's prices as overrides", async () => {
    const alphaDuo = ((await gw.call("GET", "/models/vendor/duo/endpoints", { key })).body.data as unknown as { endpoints: Array<{ tag: string; pricing: Record<string, unknown> }> }).endpoints.find((e) => e.tag === "alpha")!;
    expect(alphaDuo.pricing).toMatchObject({ image_output: "0.02" });
    const long = await listed("vendor/long");
    const overrides = [{ min_prompt_tokens: 200000, prompt: "0.0000025", completion: "0.000015" }];
    expect(long.pricing).toMatchObject({ prompt: "0.00000125", internal_reasoning: "0.00002", web_search: "0.01", overrides });
    const endpoint = ((await gw.call("GET", "/models/vendor/long/endpoints", { key })).body.data as unknown as { endpoints: Array<{ pricing: Record<string, unknown> }> }).endpoints[0]!;
    expect(endpoint.pricing).toMatchObject({ internal_reasoning: "0.00002", web_search: "0.01", overrides });
    // The official client reads them.
    const viaSdk = await sdk.models.get({ author: "vendor", slug: "long" });
    expect(viaSdk.data.pricing.overrides).toEqual([{ minPromptTokens: 200000, prompt: "0.0000025", completion: "0.000015" }]);
    const endpoints = await sdk.endpoints.list({ author: "vendor", slug: "long" });
    expect(endpoints.data.endpoints[0]!.pricing).toMatchObject({ internalReasoning: "0.00002", webSearch: "0.01" });
  });
});

describe("GET /endpoints/zdr", () => {
  it("lists the usable endpoints that retain nothing, in the model endpoint shape", async () => {
    const res = await gw.call("GET", "/endpoints/zdr", { key });
    expect(res.status).toBe(200);
    const list = res.body.data as unknown as Array<Record<string, unknown>>;
    expect(list.map((e) => [e.model_id, e.tag])).toEqual([
      ["openai/x", "local"],
      ["vendor/duo", "gem"],
    ]);
    expect(list[0]).toMatchObject({ name: "Local | openai/x", provider_name: "Local", pricing: { prompt: "0", completion: "0" }, status: 0 });
  });

  it("passes the official client's validation", async () => {
    const zdr = await sdk.endpoints.listZdrEndpoints();
    expect(zdr.data.map((e) => [e.modelId, e.providerName, e.supportsVoiceCloning])).toEqual([
      ["openai/x", "Local", false],
      ["vendor/duo", "Gem", false],
    ]);
  });
});

describe("GET /images/models and /images/models/{author}/{slug}/endpoints", () => {
  it("lists the models POST /images can draw with, parameters joined over their endpoints", async () => {
    const res = await gw.call("GET", "/images/models", { key });
    expect(res.status).toBe(200);
    const models = res.body.data as unknown as Array<Record<string, unknown> & { id: string; supported_parameters: Record<string, unknown> }>;
    expect(models.map((m) => m.id)).toEqual(["vendor/img", "vendor/duo"]);
    const duo = models[1]!;
    expect(duo).toMatchObject({
      name: "Duo",
      description: "Draws and writes.",
      created: Date.parse("2025-06-01T00:00:00Z") / 1000,
      architecture: { input_modalities: ["text", "image"], output_modalities: ["image", "text"] },
      supports_streaming: true,
      endpoints: "/api/v1/images/models/vendor/duo/endpoints",
    });
    expect(duo.supported_parameters).toMatchObject({
      n: { type: "range", min: 1, max: 10 },
      resolution: { type: "enum", values: ["1K", "2K", "4K"] },
      output_format: { type: "enum", values: ["png", "jpeg", "webp", "svg"] },
      quality: { type: "enum", values: ["auto", "low", "medium", "high"] },
      seed: { type: "boolean" },
    });
    // OpenAI-format only: no seed, one resolution.
    expect(models[0]!.supported_parameters).not.toHaveProperty("seed");
    expect(models[0]!.supported_parameters.resolution).toEqual({ type: "enum", values: ["1K"] });
  });

  it("lists a model's usable endpoints with their own parameters and billable prices", async () => {
    const res = await gw.call("GET", "/images/models/vendor/duo/endpoints", { key });
    expect(res.status).toBe(200);
    expect(res.body.id).toBe("vendor/duo");
    const [alpha, gem, ...rest] = res.body.endpoints as Array<Record<string, unknown> & { supported_parameters: Record<string, unknown> }>;
    expect(rest).toEqual([]); // gamma has no key
    expect(alpha).toMatchObject({
      provider_name: "Alpha",
      provider_slug: "alpha",
      provider_tag: "alpha",
      supports_streaming: true,
      allowed_passthrough_parameters: [],
      pricing: [
        { billable: "output_image", cost_usd: 0.02, unit: "image" },
        { billable: "output_image", cost_usd: 0.00004, unit: "token" },
        { billable: "input_text", cost_usd: 0.000005, unit: "token" },
      ],
    });
    expect(gem).toMatchObject({ provider_slug: "gem", supports_streaming: false, pricing: [{ billable: "output_image", cost_usd: 0.00003, unit: "token" }, { billable: "input_text", cost_usd: 0.0000003, unit: "token" }] });
    expect(gem!.supported_parameters).toMatchObject({ n: { type: "range", min: 1, max: 1 }, output_format: { type: "enum", values: ["png"] }, seed: { type: "boolean" } });
    expect(gem!.supported_parameters).not.toHaveProperty("quality");
    expect(gem!.supported_parameters).not.toHaveProperty("moderation");
    const img = await gw.call("GET", "/images/models/vendor/img/endpoints", { key });
    expect((img.body.endpoints as Array<{ pricing: unknown }>)[0]!.pricing).toEqual([{ billable: "input_reference", cost_usd: 0.04, unit: "image" }]);
  });

  it("passes the official client's validation", async () => {
    const listed = await sdk.images.listModels();
    expect(listed.data.map((m) => [m.id, m.supportsStreaming])).toEqual([
      ["vendor/img", true],
      ["vendor/duo", true],
    ]);
    expect(listed.data[1]!.supportedParameters.n).toEqual({ type: "range", min: 1, max: 10 });
    const endpoints = await sdk.images.listModelEndpoints({ author: "vendor", slug: "duo" });
    expect(endpoints.endpoints.map((e) => [e.providerSlug, e.providerTag, e.supportsStreaming])).toEqual([
      ["alpha", "alpha", true],
      ["gem", "gem", false],
    ]);
    expect(endpoints.endpoints[0]!.pricing[0]).toEqual({ billable: "output_image", costUsd: 0.02, unit: "image" });
    await expect(sdk.images.listModelEndpoints({ author: "vendor", slug: "a" })).rejects.toBeInstanceOf(NotFoundResponseError);
  });

  it("refuses models that make no images with 404 and malformed ids with 400", async () => {
    await expectRefused("/images/models/vendor/a/endpoints", 404, /Image model vendor\/a not found/);
    await expectRefused("/images/models/vendor/sketch/endpoints", 404);
    await expectRefused("/images/models/vendor/nope/endpoints", 404);
    await expectRefused("/images/models/vendor/duo", 404);
    await expectRefused("/images/models/vendor/a%20b/endpoints", 400, /Invalid path: slug/);
  });

  it("leaves POST /images to media", async () => {
    const res = await gw.call("POST", "/images", { key, body: { model: "vendor/duo" } });
    expect(res.status).toBe(400);
    expect(res.body.error?.message).toMatch(/prompt/);
  });
});

describe("the API description", () => {
  it("lists the new operations", async () => {
    const doc = (await (await fetch(`${gw.apiUrl}/openapi.json`)).json()) as { paths: Record<string, Record<string, { operationId: string }>> };
    const ids = ["/models/count", "/model/{author}/{slug}", "/endpoints/zdr", "/images/models", "/images/models/{author}/{slug}/endpoints"].map((p) => doc.paths[p]?.get?.operationId);
    expect(ids).toEqual(["listModelsCount", "getModel", "listEndpointsZdr", "listImageModels", "listImageModelEndpoints"]);
  });
});
