import type OpenAI from "openai";
import type { FunctionTool } from "openai/resources/responses/responses";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FakeProvider } from "./support/fake-provider.js";
import type { FakeResponses } from "./support/fake-responses.js";
import type { TestGateway } from "./support/gateway.js";
import type { ReplayProvider } from "./support/replay-provider.js";
import { startResponsesGateway, type Replies, type ResponsesFixture } from "./support/responses-fixture.js";

/** Settings of a Responses request have their effect where it shows: in what the provider receives. */
let fx: ResponsesFixture;
let gw: TestGateway;
let compat: FakeProvider;
let responses: FakeResponses;
let claude: ReplayProvider;
let gemini: ReplayProvider;
let key: string;
let openai: OpenAI;

/** Anthropic and Gemini answer with their recorded text, asked for a stream or not. */
const text = (file: string): Replies => ({ buffered: { text: { file } }, streamed: { text: { file } } });

beforeAll(async () => {
  fx = await startResponsesGateway(
    "settings",
    [
      ["compat/ok", "compat", "ok"],
      ["openai/gpt", "openai", "gpt"],
      ["openai/reasoning", "openai", "gpt-reasoning"],
      ["anthropic/text", "claude", "text"],
      ["google/text", "gemini", "text"],
    ],
    { claude: text("message.json"), gemini: text("generate.json") },
  );
  ({ gw, compat, responses, claude, gemini, key, openai } = fx);
}, 60_000);
afterAll(() => fx?.stop());

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
