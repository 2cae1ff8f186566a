import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv, imageModel } from "./support/catalog-fixture.js";
import { eventually } from "./support/eventually.js";
import { startFakeMediaProvider, type FakeMediaProvider } from "./support/fake-media.js";
import { startFakeProvider, type FakeProvider } from "./support/fake-provider.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";
import { tone } from "./support/media-fixture.js";

/**
 * A workspace's own provider keys (BYOK) through the router: which key each fake provider received, what the
 * answer and the generation say, and what the key's usage and limit count.
 */
let gw: TestGateway;
let alpha: FakeProvider;
let beta: FakeProvider;
let pixels: FakeMediaProvider;
let workspaceId: string;

const perRequest = { prompt: "0", completion: "0", request: "0.01" };
const operatorKey = "alpha-operator-secret";

beforeAll(async () => {
  [alpha, beta] = await Promise.all([startFakeProvider("alpha"), startFakeProvider("beta")]);
  pixels = await startFakeMediaProvider();
  gw = await startTestGateway({
    ...(await catalogEnv({
      providers: [
        { slug: "alpha", name: "Alpha", adapter: "openai-compatible", base_url: alpha.baseUrl, api_key_env: "BYOK_ALPHA_KEY" },
        // The operator has no key for delta: only a workspace's own can serve it.
        { slug: "delta", name: "Delta", adapter: "openai-compatible", base_url: beta.baseUrl, api_key_env: "BYOK_DELTA_KEY" },
        { slug: "pixels", name: "Pixels", adapter: "openai", base_url: pixels.baseUrl, api_key_env: "BYOK_PIXELS_KEY" },
      ],
      models: [
        { id: "byok/alpha", name: "alpha", context_length: 8000, endpoints: [{ provider: "alpha", upstream_model: "ok", pricing: perRequest }] },
        { id: "byok/delta", name: "delta", context_length: 8000, endpoints: [{ provider: "delta", upstream_model: "ok", pricing: perRequest }] },
        imageModel("byok/image", "pixels"),
        {
          id: "byok/stt",
          name: "stt",
          context_length: 1,
          input_modalities: ["audio"],
          output_modalities: ["transcription"],
          endpoints: [{ provider: "pixels", upstream_model: "ok", pricing: { prompt: "0", completion: "0", audio_second: "0.0001" } }],
        },
      ],
    })),
    BYOK_ALPHA_KEY: operatorKey,
    BYOK_PIXELS_KEY: "sk-operator-pixels",
    SWITCHYARD_ENCRYPTION_KEY: "byok-test-encryption-secret-0123456789",
  });
  const workspace = await gw.call("POST", "/workspaces", { body: { name: "Own keys", slug: "own-keys" } });
  workspaceId = String(workspace.body.data?.id);
});
afterAll(async () => {
  await gw?.stop();
  await alpha?.stop();
  await beta?.stop();
  await pixels?.stop();
});

const setKey = (provider: string, key: string, extra: Record<string, unknown> = {}) =>
  gw.call("PUT", `/workspaces/${workspaceId}/provider-keys/${provider}`, { body: { key, ...extra } });

async function newKey(body: Record<string, unknown> = {}) {
  const created = await gw.call("POST", "/keys", { body: { name: "byok", workspace_id: workspaceId, ...body } });
  expect(created.status).toBe(201);
  const key = String(created.body.key);
  return { key, hash: String(created.body.data?.hash), openai: new OpenAI({ apiKey: key, baseURL: gw.apiUrl, maxRetries: 0 }) };
}
const record = async (hash: string) => (await gw.call("GET", `/keys/${hash}`)).body.data as Record<string, number>;
const messages = [{ role: "user" as const, content: "hi" }];
type ByokUsage = { cost: number; is_byok: boolean; cost_details: { upstream_inference_cost: number } };

describe("a workspace's own provider keys", () => {
  it("sends the workspace's key, says is_byok, bills nothing and counts the cost as BYOK usage", async () => {
    expect((await setKey("alpha", "sk-workspace-alpha-1234")).body.data).toMatchObject({ provider: "alpha", label: "…1234", operator_fallback: true });
    const { key, hash, openai } = await newKey();
    const answer = await openai.chat.completions.create({ model: "byok/alpha", messages });
    expect(alpha.requests.at(-1)!.authorization).toBe("Bearer sk-workspace-alpha-1234");
    const usage = answer.usage as unknown as ByokUsage;
    expect(usage).toMatchObject({ cost: 0, is_byok: true, cost_details: { upstream_inference_cost: 0.01 } });
    await eventually(async () => (await record(hash)).byok_usage === 0.01, 5000);
    expect(await record(hash)).toMatchObject({ usage: 0, byok_usage: 0.01, byok_usage_daily: 0.01 });
    await eventually(async () => (await gw.call("GET", `/generation?id=${answer.id}`, { key })).status === 200, 5000);
    expect((await gw.call("GET", `/generation?id=${answer.id}`, { key })).body.data).toMatchObject({ is_byok: true, total_cost: 0, upstream_inference_cost: 0.01 });
  });

  it("serves a provider the operator has no key for once the workspace brings one", async () => {
    const { openai } = await newKey();
    const before = await openai.chat.completions.create({ model: "byok/delta", messages }).catch((e: { status?: number }) => e.status);
    expect(before).toBe(404);
    expect((await setKey("delta", "sk-workspace-delta-5678")).status).toBe(200);
    await openai.chat.completions.create({ model: "byok/delta", messages });
    expect(beta.requests.at(-1)!.authorization).toBe("Bearer sk-workspace-delta-5678");
  });

  it("goes on with the operator's key when the workspace's is refused, unless the workspace forbids it, and never shows the key", async () => {
    const { openai } = await newKey();
    expect((await setKey("alpha", "sk-revoked-workspace-key-9999")).status).toBe(200);
    const fallback = await openai.chat.completions.create({ model: "byok/alpha", messages });
    expect(alpha.requests.slice(-2).map((r) => r.authorization)).toEqual(["Bearer sk-revoked-workspace-key-9999", `Bearer ${operatorKey}`]);
    expect(fallback.usage as unknown as ByokUsage).toMatchObject({ cost: 0.01, is_byok: false });

    expect((await setKey("alpha", "sk-revoked-workspace-key-9999", { operator_fallback: false })).body.data).toMatchObject({ operator_fallback: false });
    const before = alpha.requests.length;
    const refused = await gw.call("POST", "/chat/completions", { key: String((await newKey()).key), body: { model: "byok/alpha", messages } });
    expect(alpha.requests.length).toBe(before + 1);
    expect(refused.status).toBe(502);
    expect(refused.body.error?.message).toBe("The workspace's own alpha key was refused (401): check or replace it");
    expect(JSON.stringify(refused.body)).not.toContain("revoked-workspace-key");
    expect((await gw.call("DELETE", `/workspaces/${workspaceId}/provider-keys/alpha`)).status).toBe(200);
  });

  it("refuses a key an HTTP header cannot carry, and a field it does not know, keeping the key it had", async () => {
    expect((await setKey("alpha", "sk-workspace-alpha-1234")).status).toBe(200);
    for (const key of ["sk-ключ-12345678", "sk-del\u007f-12345678", "sk-tab\tkey-12345678"]) {
      const refused = await setKey("alpha", key);
      expect(refused.status).toBe(400);
      expect(refused.body.error?.message).toContain("key: must be visible ASCII characters");
    }
    const misnamed = await setKey("alpha", "sk-workspace-alpha-5678", { operatorFallback: false });
    expect(misnamed.status).toBe(400);
    expect(misnamed.body.error?.message).toContain("operatorFallback");
    const { openai } = await newKey();
    await openai.chat.completions.create({ model: "byok/alpha", messages });
    expect(alpha.requests.at(-1)!.authorization).toBe("Bearer sk-workspace-alpha-1234");
  });

  it("serves image generation with the workspace's key too, billing nothing", async () => {
    expect((await setKey("pixels", "sk-workspace-pixels-4321")).status).toBe(200);
    const { key, hash } = await newKey();
    const res = await gw.call("POST", "/images", { key, body: { model: "byok/image", prompt: "a lighthouse" } });
    expect(res.status).toBe(200);
    expect(pixels.requests.at(-1)!.headers.authorization).toBe("Bearer sk-workspace-pixels-4321");
    expect(res.body.usage).toEqual(expect.objectContaining({ cost: 0, is_byok: true }));
    await eventually(async () => (await record(hash)).byok_usage === 0.04, 5000);
    // Streamed, the completed image's usage says so too.
    const streamed = await fetch(`${gw.apiUrl}/images`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "byok/image", prompt: "a comet", stream: true }),
    });
    const frames = (await streamed.text()).split("\n\n").filter((f) => f.startsWith("data: {"));
    const completed = JSON.parse(frames.at(-1)!.slice(6)) as { type: string; usage?: { cost: number; is_byok?: boolean } };
    expect(completed).toMatchObject({ type: "image_generation.completed", usage: { cost: 0, is_byok: true } });
  });

  it("serves transcription with the workspace's key too, and says so in its usage", async () => {
    expect((await setKey("pixels", "sk-workspace-pixels-4321")).status).toBe(200);
    const { key } = await newKey();
    const body = { model: "byok/stt", input_audio: { data: tone(8000, 1).toString("base64"), format: "wav" } };
    const res = await gw.call("POST", "/audio/transcriptions", { key, body });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(pixels.requests.at(-1)!.headers.authorization).toBe("Bearer sk-workspace-pixels-4321");
    expect(res.body.usage).toEqual(expect.objectContaining({ cost: 0, is_byok: true }));
    expect((await gw.call("DELETE", `/workspaces/${workspaceId}/provider-keys/pixels`)).status).toBe(200);
    const operator = await gw.call("POST", "/audio/transcriptions", { key, body });
    expect(operator.status, JSON.stringify(operator.body)).toBe(200);
    expect(operator.body.usage).toEqual(expect.objectContaining({ cost: 0.0001, is_byok: false }));
  });

  it("counts BYOK spend against the key's limit only when include_byok_in_limit says so", async () => {
    expect((await setKey("alpha", "sk-workspace-alpha-1234")).status).toBe(200);
    const apart = await newKey({ limit: 0.005, include_byok_in_limit: false });
    expect((await gw.call("POST", "/chat/completions", { key: apart.key, body: { model: "byok/alpha", messages } })).status).toBe(200);
    const counted = await newKey({ limit: 0.005, include_byok_in_limit: true });
    const refused = await gw.call("POST", "/chat/completions", { key: counted.key, body: { model: "byok/alpha", messages } });
    expect(refused.status).toBe(402);
  });

  it("counts BYOK spend against a guardrail's budget only when include_byok_in_budgets says so", async () => {
    expect((await setKey("alpha", "sk-workspace-alpha-1234")).status).toBe(200);
    const underBudget = async (include: boolean) => {
      const created = await newKey();
      const guardrail = await gw.call("POST", "/guardrails", {
        body: { name: `byok ${include}`, limit_usd: 0.005, reset_interval: "daily", include_byok_in_budgets: include, workspace_id: workspaceId },
      });
      await gw.call("POST", `/guardrails/${guardrail.body.data?.id}/assignments/keys`, { body: { key_hashes: [created.hash] } });
      return (await gw.call("POST", "/chat/completions", { key: created.key, body: { model: "byok/alpha", messages } })).status;
    };
    expect(await underBudget(false)).toBe(200);
    expect(await underBudget(true)).toBe(402);
  });
});
