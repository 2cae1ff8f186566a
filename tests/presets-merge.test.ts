import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { startFakeProvider, type FakeProvider } from "./support/fake-provider.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";

let gw: TestGateway;
let alpha: FakeProvider;
let key: string;

beforeAll(async () => {
  alpha = await startFakeProvider("alpha", () => "ok");
  const model = (id: string, upstream: string) => ({
    id,
    name: id,
    context_length: 8000,
    endpoints: [{ provider: "alpha", upstream_model: upstream, pricing: { prompt: "0", completion: "0" } }],
  });
  const catalog = {
    providers: [{ slug: "alpha", name: "Alpha", adapter: "openai-compatible", base_url: alpha.baseUrl, requires_api_key: false }],
    models: [model("vendor/a", "a"), model("vendor/b", "b")],
  };
  gw = await startTestGateway(await catalogEnv(catalog));
  key = String((await gw.call("POST", "/keys", { body: { name: "inference" } })).body.key);
});
afterAll(async () => {
  await gw?.stop();
  await alpha?.stop();
});

const save = (slug: string, body: Record<string, unknown>) =>
  gw.call("POST", `/presets/${slug}/chat/completions`, { body: { messages: [{ role: "user", content: "hi" }], ...body } });
const user = [{ role: "user", content: "hi" }];

/** Sends `body` on `path` and returns the body the provider received. */
async function sent(path: string, body: Record<string, unknown>): Promise<Record<string, unknown>> {
  const before = alpha.requests.length;
  const answer = await gw.call("POST", path, { key, body, headers: path === "/messages" ? { "anthropic-version": "2023-06-01" } : {} });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  expect(alpha.requests.length).toBe(before + 1);
  return alpha.requests.at(-1)!.body;
}

const limitOf = (body: Record<string, unknown>) => body.max_completion_tokens ?? body.max_tokens;

describe("a preset's fields as the request's defaults", () => {
  it("lets the request's output limit win over the preset's on chat, responses and messages", async () => {
    expect((await save("limit", { model: "vendor/a", max_completion_tokens: 50 })).status).toBe(200);
    expect(limitOf(await sent("/chat/completions", { preset: "limit", messages: user, max_tokens: 500 }))).toBe(500);
    expect(limitOf(await sent("/chat/completions", { model: "@preset/limit", messages: user, max_tokens: 500 }))).toBe(500);
    expect(limitOf(await sent("/responses", { model: "@preset/limit", input: "hi", max_output_tokens: 500 }))).toBe(500);
    expect(limitOf(await sent("/messages", { model: "@preset/limit", messages: user, max_tokens: 500 }))).toBe(500);
    // Without its own limit the request takes the preset's.
    expect(limitOf(await sent("/chat/completions", { model: "@preset/limit", messages: user }))).toBe(50);

    expect((await save("limit-old", { model: "vendor/a", max_tokens: 50 })).status).toBe(200);
    expect(limitOf(await sent("/chat/completions", { model: "@preset/limit-old", messages: user, max_completion_tokens: 500 }))).toBe(500);
  });

  it("lets the request's reasoning effort win over the preset's, keeping the preset's other reasoning settings", async () => {
    expect((await save("thinker", { model: "vendor/a", reasoning: { effort: "high", exclude: true } })).status).toBe(200);
    const chat = await sent("/chat/completions", { model: "@preset/thinker", messages: user, reasoning_effort: "low" });
    expect(chat.reasoning_effort ?? (chat.reasoning as { effort?: unknown } | undefined)?.effort).toBe("low");
    expect(JSON.stringify(chat)).not.toContain("high");
    const responses = await sent("/responses", { model: "@preset/thinker", input: "hi", reasoning: { effort: "low" } });
    expect(JSON.stringify(responses)).not.toContain("high");

    expect((await save("effort", { model: "vendor/a", reasoning_effort: "high" })).status).toBe(200);
    const nested = await sent("/chat/completions", { model: "@preset/effort", messages: user, reasoning: { effort: "low" } });
    expect(JSON.stringify(nested)).not.toContain("high");
  });
});

describe("saving presets", () => {
  it("keeps a system prompt given as text parts or by the developer role", async () => {
    const parts = await save("parts", { model: "vendor/a", messages: [{ role: "system", content: [{ type: "text", text: "Be " }, { type: "text", text: "brief." }] }, ...user] });
    expect(parts.body.data?.designated_version).toMatchObject({ system_prompt: "Be brief." });
    const developer = await save("developer", { model: "vendor/a", messages: [{ role: "developer", content: "Be kind." }, ...user] });
    expect(developer.body.data?.designated_version).toMatchObject({ system_prompt: "Be kind." });
    const bad = await save("bad-content", { model: "vendor/a", messages: [{ role: "system", content: 5 }, ...user] });
    expect(bad.status).toBe(400);
    expect(bad.body.error?.message).toContain("messages.0.content");
  });

  it("refuses the slugs . and ..", async () => {
    for (const slug of [".", ".."]) {
      const saved = await gw.call("POST", "/presets", { body: { slug, model: "vendor/a" } });
      expect(saved.status, slug).toBe(400);
    }
    expect((await gw.call("POST", "/presets", { body: { slug: ".a.", model: "vendor/a" } })).status).toBe(200);
  });

  it("refuses a preset as a workspace's default model", async () => {
    const refused = await gw.call("POST", "/workspaces", { body: { name: "ws", slug: "preset-default", default_text_model: "@preset/limit" } });
    expect(refused.status).toBe(400);
    expect(refused.body.error?.message).toContain("default_text_model");
    const image = await gw.call("POST", "/workspaces", { body: { name: "ws", slug: "preset-image", default_image_model: "@preset/limit" } });
    expect(image.status).toBe(400);
    expect(image.body.error?.message).toContain("default_image_model");
  });
});
