import { join } from "node:path";
import OpenAI from "openai";
import type { FunctionTool } from "openai/resources/responses/responses";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { startFakeProvider, type FakeProvider } from "./support/fake-provider.js";
import { startFakeResponses, type FakeResponses } from "./support/fake-responses.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";
import { startReplayProvider, type ReplayProvider } from "./support/replay-provider.js";

/** Settings of a Responses request have their effect where it shows: in what the provider receives. */
let gw: TestGateway;
let compat: FakeProvider;
let responses: FakeResponses;
let claude: ReplayProvider;
let gemini: ReplayProvider;
let key: string;
let openai: OpenAI;

const pricing = { prompt: "0.000002", completion: "0.000008" };
const model = (id: string, provider: string, upstream: string) => ({
  id,
  name: id,
  context_length: 200000,
  input_modalities: ["text", "image"],
  endpoints: [{ provider, upstream_model: upstream, pricing, max_completion_tokens: 8192 }],
});

beforeAll(async () => {
  compat = await startFakeProvider("compat");
  responses = await startFakeResponses();
  const fixtures = join(import.meta.dirname, "fixtures");
  claude = await startReplayProvider(join(fixtures, "anthropic"), () => ({ file: "message.json" }));
  gemini = await startReplayProvider(join(fixtures, "google"), () => ({ file: "generate.json" }));
  const catalog = {
    providers: [
      { slug: "compat", name: "Compat", adapter: "openai-compatible", base_url: compat.baseUrl, requires_api_key: false },
      { slug: "openai", name: "OpenAI", adapter: "openai", base_url: responses.baseUrl, requires_api_key: false },
      { slug: "claude", name: "Claude", adapter: "anthropic", base_url: claude.baseUrl, requires_api_key: false },
      { slug: "gemini", name: "Gemini", adapter: "google", base_url: gemini.baseUrl, requires_api_key: false },
    ],
    models: [
      model("compat/ok", "compat", "ok"),
      model("openai/gpt", "openai", "gpt"),
      model("openai/reasoning", "openai", "gpt-reasoning"),
      model("anthropic/text", "claude", "text"),
      model("google/text", "gemini", "text"),
    ],
  };
  gw = await startTestGateway(await catalogEnv(catalog));
  key = String((await gw.call("POST", "/keys", { body: { name: "settings" } })).body.key);
  openai = new OpenAI({ apiKey: key, baseURL: gw.apiUrl });
}, 60_000);
afterAll(async () => {
  await gw?.stop();
  await Promise.all([compat?.stop(), responses?.stop(), claude?.stop(), gemini?.stop()]);
});

const post = (body: Record<string, unknown>) => gw.call("POST", "/responses", { key, body });
const lastOpenAi = () => responses.requests.at(-1)!.body;
/** The count of requests every provider has received. */
const upstreamCalls = () => compat.requests.length + responses.requests.length + claude.requests.length + gemini.requests.length;

describe("include", () => {
  it("asks OpenAI for encrypted reasoning whenever the request includes it, reasoning set or not", async () => {
    await openai.responses.create({ model: "openai/reasoning", input: "Say hello", include: ["reasoning.encrypted_content"] });
    expect(lastOpenAi().include).toEqual(["reasoning.encrypted_content"]);
    expect(lastOpenAi()).not.toHaveProperty("reasoning");
    await openai.responses.create({ model: "openai/reasoning", input: "Say hello", include: ["reasoning.encrypted_content"], stream: true });
    expect(lastOpenAi()).toMatchObject({ stream: true, include: ["reasoning.encrypted_content"] });
    await openai.responses.create({ model: "openai/gpt", input: "Say hello" });
    expect(lastOpenAi()).not.toHaveProperty("include");
  });
});

describe("tool_choice", () => {
  it("refuses a server tool's type that no tool of the request is, before a provider is called", async () => {
    const fn = { type: "function", name: "f", parameters: { type: "object", properties: {} } };
    for (const type of ["file_search", "image_generation", "web_search_preview"]) {
      for (const model of ["openai/gpt", "anthropic/text"]) {
        const before = upstreamCalls();
        const res = await post({ model, input: "hi", tools: [fn], tool_choice: { type } });
        expect(res.status).toBe(400);
        expect(String((res.body.error as { message: string }).message)).toMatch(/tool_choice: must name a tool of the request/);
        expect(upstreamCalls()).toBe(before);
      }
    }
    const bare = await post({ model: "openai/gpt", input: "hi", tool_choice: { type: "file_search" } });
    expect(bare.status).toBe(400);
  });
});

describe("function tools' strict", () => {
  const parameters = { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false };

  it("is left out upstream when the client leaves it out, and echoed as OpenAI's default", async () => {
    const loose = await post({ model: "openai/gpt", input: "Weather?", tools: [{ type: "function", name: "get_weather", parameters }] });
    expect(lastOpenAi().tools).toEqual([{ type: "function", name: "get_weather", parameters }]);
    expect((loose.body.tools as FunctionTool[])[0]!.strict).toBe(true);
    const strict = await openai.responses.create({ model: "openai/gpt", input: "Weather?", tools: [{ type: "function", name: "get_weather", parameters, strict: false }] });
    expect(lastOpenAi().tools).toEqual([{ type: "function", name: "get_weather", parameters, strict: false }]);
    expect((strict.tools[0] as FunctionTool).strict).toBe(false);
  });

  it("is false on the functions the gateway declares for its server tools", async () => {
    const before = responses.requests.length;
    await post({ model: "openai/gpt", input: "What time is it?", tools: [{ type: "openrouter:datetime" }] });
    expect(responses.requests[before]!.body.tools).toEqual([expect.objectContaining({ type: "function", name: "datetime", strict: false })]);
  });
});

describe("input_image by file_id", () => {
  const content = [
    { type: "input_text", text: "What is this?" },
    { type: "input_image", file_id: "file-abc123", detail: "high" },
  ];

  it("reaches OpenAI's Responses API as an input_image with its file id and detail", async () => {
    await openai.responses.create({ model: "openai/gpt", input: [{ role: "user", content: content as never }] });
    expect((lastOpenAi().input as Array<{ content: unknown }>)[0]!.content).toEqual([
      { type: "input_text", text: "What is this?" },
      { type: "input_image", file_id: "file-abc123", detail: "high" },
    ]);
  });

  it("is refused with 400 for endpoints that cannot take it, before a provider is called", async () => {
    for (const model of ["anthropic/text", "google/text", "compat/ok"]) {
      const before = upstreamCalls();
      const res = await post({ model, input: [{ role: "user", content }] });
      expect(res.status).toBe(400);
      expect(String((res.body.error as { message: string }).message)).toMatch(/input_image by file_id/);
      expect(upstreamCalls()).toBe(before);
    }
  });
});

describe("safety_identifier", () => {
  it("reaches OpenAI hashed per workspace, and user does not overwrite it", async () => {
    const alone = await openai.responses.create({ model: "openai/gpt", input: "hi", safety_identifier: "sid-bob" });
    const sid = lastOpenAi().safety_identifier;
    expect(sid).toMatch(/^[0-9a-f]{32}$/);
    expect(alone.safety_identifier).toBe("sid-bob");
    await openai.responses.create({ model: "openai/gpt", input: "hi", user: "alice" });
    const alice = lastOpenAi().safety_identifier;
    expect(alice).not.toBe(sid);

    const both = await openai.responses.create({ model: "openai/gpt", input: "hi", user: "alice", safety_identifier: "sid-bob" });
    expect(lastOpenAi()).toMatchObject({ safety_identifier: sid, user: alice });
    expect([both.user, both.safety_identifier]).toEqual(["alice", "sid-bob"]);
    await openai.responses.create({ model: "openai/gpt", input: "hi", user: "alice", safety_identifier: "sid-bob", stream: true });
    expect(lastOpenAi()).toMatchObject({ safety_identifier: sid, user: alice });
  });
});
