import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv, imageModel } from "./support/catalog-fixture.js";
import { startFakeMediaProvider, type FakeMediaProvider } from "./support/fake-media.js";
import { startFakeProvider, type FakeProvider } from "./support/fake-provider.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";

/**
 * Provider routing settings of requests, workspaces and guardrails, seen where they act: which fake
 * provider each request reached.
 */
let gw: TestGateway;
let alpha: FakeProvider;
let beta: FakeProvider;
let gamma: FakeProvider;
let pixels: FakeMediaProvider;
let key: string;
let openai: OpenAI;

const cheap = { prompt: "0.000001", completion: "0.000002" };
const dear = { prompt: "0.000002", completion: "0.000004" };
const free = { prompt: "0", completion: "0" };

beforeAll(async () => {
  [alpha, beta, gamma] = await Promise.all([startFakeProvider("alpha"), startFakeProvider("beta"), startFakeProvider("gamma")]);
  pixels = await startFakeMediaProvider();
  const provider = (slug: string, fake: FakeProvider, data_policy?: Record<string, boolean>) => ({
    slug,
    name: slug,
    adapter: "openai-compatible",
    base_url: fake.baseUrl,
    requires_api_key: false,
    ...(data_policy ? { data_policy } : {}),
  });
  const model = (id: string, endpoints: Array<Record<string, unknown>>, extra: Record<string, unknown> = {}) => ({ id, name: id, context_length: 8000, endpoints, ...extra });
  gw = await startTestGateway(
    await catalogEnv({
      providers: [
        provider("alpha", alpha),
        provider("beta", beta, { retains_prompts: true }),
        provider("gamma", gamma, { publishes_free_prompts: true }),
        { slug: "pixels", name: "Pixels", adapter: "openai", base_url: pixels.baseUrl, requires_api_key: false },
      ],
      models: [
        model("r/fail-first", [
          { provider: "alpha", upstream_model: "fail-500", pricing: cheap },
          { provider: "beta", upstream_model: "ok", pricing: dear },
        ]),
        model("r/two", [
          { provider: "alpha", upstream_model: "ok", pricing: dear },
          { provider: "beta", upstream_model: "ok", pricing: cheap },
        ]),
        model("r/quantized", [
          { provider: "alpha", upstream_model: "ok", pricing: cheap, quantization: "fp8" },
          { provider: "beta", upstream_model: "ok", pricing: cheap },
        ]),
        model("r/audio", [
          { provider: "alpha", upstream_model: "ok", pricing: { ...cheap, audio: "0.01" } },
          { provider: "beta", upstream_model: "ok", pricing: { ...cheap, audio: "0.0001" } },
        ]),
        model("r/distillable", [{ provider: "alpha", upstream_model: "ok", pricing: cheap }], { distillable: true }),
        imageModel("r/image", "pixels"),
        model("r/free", [
          { provider: "gamma", upstream_model: "ok", pricing: free },
          { provider: "alpha", upstream_model: "ok", pricing: cheap },
        ]),
      ],
    }),
  );
  key = String((await gw.call("POST", "/keys", { body: { name: "routing" } })).body.key);
  openai = new OpenAI({ apiKey: key, baseURL: gw.apiUrl, maxRetries: 0 });
});
afterAll(async () => {
  await gw?.stop();
  await Promise.all([alpha, beta, gamma, pixels].map((f) => f?.stop()));
});

const messages = [{ role: "user" as const, content: "hi" }];
/** Sends `n` requests and says how many each provider received. */
async function served(n: number, body: Record<string, unknown>, as = openai) {
  const before = [alpha.requests.length, beta.requests.length, gamma.requests.length];
  const statuses: number[] = [];
  for (let i = 0; i < n; i++) {
    const answer = await as.chat.completions.create({ model: "r/two", messages, ...body } as never).then(
      () => 200,
      (e: { status?: number }) => e.status ?? 0,
    );
    statuses.push(answer);
  }
  const [a, b, c] = [alpha.requests.length - before[0]!, beta.requests.length - before[1]!, gamma.requests.length - before[2]!];
  return { statuses, alpha: a, beta: b, gamma: c };
}

describe("request provider preferences", () => {
  it("tries only the first endpoint of the default order when allow_fallbacks is false without an order", async () => {
    // First, while alpha's endpoint is not yet resting after a failure: it leads the price order.
    const single = await served(1, { model: "r/fail-first", provider: { sort: "price", allow_fallbacks: false } });
    expect(single).toMatchObject({ alpha: 1, beta: 0 });
    expect(single.statuses[0]).toBeGreaterThanOrEqual(500);
    expect(await served(1, { model: "r/fail-first", provider: { sort: "price" } })).toMatchObject({ statuses: [200], beta: 1 });
  });

  it("excludes providers that retain prompts under data_collection: deny", async () => {
    expect(await served(8, { provider: { data_collection: "deny" } })).toMatchObject({ statuses: Array(8).fill(200), alpha: 8, beta: 0 });
  });

  it("treats an endpoint without a declared quantization as unknown", async () => {
    expect(await served(4, { model: "r/quantized", provider: { quantizations: ["fp8"] } })).toMatchObject({ alpha: 4, beta: 0 });
    expect(await served(4, { model: "r/quantized", provider: { quantizations: ["unknown"] } })).toMatchObject({ alpha: 0, beta: 4 });
  });

  it("skips endpoints whose audio price is above max_price.audio", async () => {
    expect(await served(4, { model: "r/audio", provider: { max_price: { audio: "0.001" } } })).toMatchObject({ statuses: Array(4).fill(200), alpha: 0, beta: 4 });
  });

  it("serves only models whose authors allow distillation under enforce_distillable_text", async () => {
    const refused = await gw.call("POST", "/chat/completions", { key, body: { model: "r/two", messages, provider: { enforce_distillable_text: true } } });
    expect(refused.status).toBe(404);
    expect(refused.body.error?.message).toContain("does not allow text distillation");
    expect((await served(1, { model: "r/distillable", provider: { enforce_distillable_text: true } })).statuses).toEqual([200]);
  });
});

describe("workspace and guardrail data policies", () => {
  it("excludes providers that retain prompts when the workspace denies data collection", async () => {
    const workspace = await gw.call("POST", "/workspaces", { body: { name: "No retention", slug: "no-retention", data_collection: "deny" } });
    expect(workspace.status).toBe(201);
    const created = await gw.call("POST", "/keys", { body: { name: "private", workspace_id: workspace.body.data?.id } });
    const scoped = new OpenAI({ apiKey: String(created.body.key), baseURL: gw.apiUrl, maxRetries: 0 });
    expect(await served(8, {}, scoped)).toMatchObject({ statuses: Array(8).fill(200), alpha: 8, beta: 0 });
  });

  it("excludes free endpoints that may publish prompts unless a guardrail allows publication", async () => {
    const guarded = async (settings: Record<string, unknown>) => {
      const created = await gw.call("POST", "/keys", { body: { name: "guarded" } });
      const guardrail = await gw.call("POST", "/guardrails", { body: { name: "publication", ...settings } });
      await gw.call("POST", `/guardrails/${guardrail.body.data?.id}/assignments/keys`, { body: { key_hashes: [created.body.data?.hash] } });
      return new OpenAI({ apiKey: String(created.body.key), baseURL: gw.apiUrl, maxRetries: 0 });
    };
    expect(await served(6, { model: "r/free", provider: { sort: "price" } }, await guarded({}))).toMatchObject({ alpha: 6, gamma: 0 });
    expect(await served(6, { model: "r/free", provider: { sort: "price" } }, await guarded({ enable_free_model_publication: true }))).toMatchObject({
      alpha: 0,
      gamma: 6,
    });
  });
});

describe("workspace defaults", () => {
  /** A key of a new workspace with these settings. */
  async function workspaceKey(slug: string, settings: Record<string, unknown>) {
    const workspace = await gw.call("POST", "/workspaces", { body: { name: slug, slug, ...settings } });
    expect(workspace.status).toBe(201);
    const created = await gw.call("POST", "/keys", { body: { name: slug, workspace_id: workspace.body.data?.id } });
    return { key: String(created.body.key), workspaceId: String(workspace.body.data?.id) };
  }

  it("gives a request without a model the workspace's default_text_model, or says there is none", async () => {
    const withDefault = await workspaceKey("text-default", { default_text_model: "r/distillable" });
    const before = alpha.requests.length;
    const answered = await gw.call("POST", "/chat/completions", { key: withDefault.key, body: { messages } });
    expect(answered.status).toBe(200);
    expect(answered.body.model).toBe("r/distillable");
    expect(alpha.requests.length).toBe(before + 1);
    const refused = await gw.call("POST", "/chat/completions", { key, body: { messages } });
    expect(refused.status).toBe(400);
    expect(refused.body.error?.message).toContain("default_text_model");
  });

  it("gives an image request without a model the workspace's default_image_model", async () => {
    const withDefault = await workspaceKey("image-default", { default_image_model: "r/image" });
    const before = pixels.requests.length;
    const answered = await gw.call("POST", "/images", { key: withDefault.key, body: { prompt: "a lighthouse" } });
    expect(answered.status).toBe(200);
    expect(pixels.requests.length).toBe(before + 1);
    expect((await gw.call("POST", "/images", { key, body: { prompt: "a lighthouse" } })).status).toBe(400);
  });

  it("orders providers by the workspace's default_provider_sort unless the request sorts or orders them", async () => {
    const sorted = await workspaceKey("by-price", { default_provider_sort: "price" });
    const client = new OpenAI({ apiKey: sorted.key, baseURL: gw.apiUrl, maxRetries: 0 });
    // r/two: beta is the cheaper endpoint.
    expect(await served(8, {}, client)).toMatchObject({ statuses: Array(8).fill(200), alpha: 0, beta: 8 });
    expect(await served(4, { provider: { order: ["alpha"] } }, client)).toMatchObject({ alpha: 4, beta: 0 });
    expect((await gw.call("PATCH", `/workspaces/${sorted.workspaceId}`, { body: { default_provider_sort: "cheapest" } })).status).toBe(400);
  });
});
