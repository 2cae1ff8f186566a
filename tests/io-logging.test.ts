import { OpenRouter } from "@openrouter/sdk";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { eventually } from "./support/eventually.js";
import { startFakeProvider, type FakeProvider } from "./support/fake-provider.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";

/**
 * Input/output logging per workspace, through the router: what is kept of a generation is read with the
 * SDK's `generations.listGenerationContent`, only where the workspace turned it on, and not past retention.
 */
let gw: TestGateway;
let alpha: FakeProvider;

beforeAll(async () => {
  alpha = await startFakeProvider("alpha");
  gw = await startTestGateway({
    ...(await catalogEnv({
      providers: [{ slug: "alpha", name: "Alpha", adapter: "openai-compatible", base_url: alpha.baseUrl, requires_api_key: false }],
      models: [{ id: "chat/ok", name: "ok", context_length: 8000, endpoints: [{ provider: "alpha", upstream_model: "ok", pricing: { prompt: "0", completion: "0" } }] }],
    })),
    GENERATION_CONTENT_RETENTION_MS: "4000",
  });
});
afterAll(async () => {
  await gw?.stop();
  await alpha?.stop();
});

/** A key of a new workspace with these settings, and the SDK client that uses it. */
async function workspaceKey(slug: string, settings: Record<string, unknown>) {
  const workspace = await gw.call("POST", "/workspaces", { body: { name: slug, slug, ...settings } });
  expect(workspace.status).toBe(201);
  const created = await gw.call("POST", "/keys", { body: { name: slug, workspace_id: workspace.body.data?.id } });
  const key = String(created.body.key);
  return { key, sdk: new OpenRouter({ apiKey: key, serverURL: gw.apiUrl, retryConfig: { strategy: "none" } }) };
}

const messages = [
  { role: "system" as const, content: "Be brief." },
  { role: "user" as const, content: "Write to ada@example.org" },
];
const chat = (key: string, stream = false) => gw.call("POST", "/chat/completions", { key, body: { model: "chat/ok", messages, stream } });
const contentOf = (key: string, id: string) => gw.call("GET", `/generation/content?id=${encodeURIComponent(id)}`, { key });

describe("input/output logging", () => {
  it("keeps what the provider was sent and answered, read with the SDK, streamed or not", async () => {
    const { key, sdk } = await workspaceKey("logged", { is_observability_io_logging_enabled: true, io_logging_sampling_rate: 1 });
    const buffered = await chat(key);
    const id = String(buffered.body.id);
    await eventually(async () => (await contentOf(key, id)).status === 200, 5000);
    const kept = await sdk.generations.listGenerationContent({ id });
    expect(kept.data.input).toEqual({ messages });
    expect(kept.data.output).toEqual({ completion: "Hello from alpha", reasoning: null });
    expect(kept.data.error).toBeNull();

    const streamed = await fetch(`${gw.apiUrl}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "chat/ok", messages, stream: true }),
    });
    await streamed.text();
    const streamedId = String(streamed.headers.get("x-generation-id"));
    await eventually(async () => (await contentOf(key, streamedId)).status === 200, 5000);
    expect((await contentOf(key, streamedId)).body.data).toMatchObject({ output: { completion: "Hello from alpha" } });
  });

  it("keeps the prompt as the provider got it, after the guardrails' content filters", async () => {
    const { key } = await workspaceKey("logged-filtered", { is_observability_io_logging_enabled: true });
    const hash = String((await gw.call("GET", "/key", { key })).body.data?.hash);
    const guardrail = await gw.call("POST", "/guardrails", { body: { name: "no mail", content_filter_builtins: [{ slug: "email", action: "redact" }] } });
    await gw.call("POST", `/guardrails/${guardrail.body.data?.id}/assignments/keys`, { body: { key_hashes: [hash] } });
    const id = String((await chat(key)).body.id);
    await eventually(async () => (await contentOf(key, id)).status === 200, 5000);
    expect(JSON.stringify((await contentOf(key, id)).body.data)).not.toContain("ada@example.org");
  });

  it("keeps nothing for a workspace that does not log, or a generation not sampled, and shows nothing to another workspace", async () => {
    const off = await workspaceKey("not-logged", {});
    const unsampled = await workspaceKey("never-sampled", { is_observability_io_logging_enabled: true, io_logging_sampling_rate: 0 });
    const logged = await workspaceKey("logged-private", { is_observability_io_logging_enabled: true });
    const ids = [String((await chat(off.key)).body.id), String((await chat(unsampled.key)).body.id)];
    const private_ = String((await chat(logged.key)).body.id);
    await eventually(async () => (await contentOf(logged.key, private_)).status === 200, 5000);
    expect((await contentOf(off.key, ids[0]!)).status).toBe(404);
    expect((await contentOf(unsampled.key, ids[1]!)).status).toBe(404);
    // Another workspace's key cannot tell the generation exists.
    expect((await contentOf(off.key, private_)).status).toBe(404);
  });

  it.skipIf(!process.env.DATABASE_URL)("lets kept content go when its retention has passed", async () => {
    const { key } = await workspaceKey("short-lived", { is_observability_io_logging_enabled: true });
    const id = String((await chat(key)).body.id);
    await eventually(async () => (await contentOf(key, id)).status === 200, 5000);
    await eventually(async () => (await contentOf(key, id)).status === 404, 8000);
    const client = new pg.Client({ connectionString: gw.databaseUrl });
    await client.connect();
    try {
      // The retention sweep removes its row (and its object) too.
      await eventually(async () => (await client.query(`SELECT 1 FROM storage.generation_content WHERE generation_id = $1`, [id])).rowCount === 0, 8000);
    } finally {
      await client.end();
    }
  });
});
