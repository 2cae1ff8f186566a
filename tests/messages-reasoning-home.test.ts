import Anthropic from "@anthropic-ai/sdk";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { startFakeAnthropic, type FakeAnthropic } from "./support/fake-anthropic.js";
import { startFakeChat, type FakeChat } from "./support/fake-chat-script.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";
import { startReplayProvider, type ReplayProvider } from "./support/replay-provider.js";

/**
 * Reasoning sent back to the Messages API reaches only the provider that made it: Anthropic's signed and
 * redacted thinking, OpenAI's encrypted reasoning and Gemini's thought signatures (the last two wrapped as
 * `switchyard:<format>:<id>:`) each go home, and an OpenAI-compatible endpoint gets none of them, only
 * reasoning text without a signature, unless it is a router that relays them to the providers behind it.
 */
type Json = Record<string, unknown>;

let gw: TestGateway;
let chat: FakeChat;
let router: FakeChat;
let claude: FakeAnthropic;
let gemini: ReplayProvider;
let client: Anthropic;

const pricing = { prompt: "0.000001", completion: "0.000002" };
const supported = ["max_tokens", "temperature", "top_p", "top_k", "stop", "tools", "tool_choice", "reasoning"];
const model = (id: string, provider: string, upstream: string) => ({
  id,
  name: id,
  context_length: 100000,
  input_modalities: ["text"],
  endpoints: [{ provider, upstream_model: upstream, pricing, max_completion_tokens: 4096, supported_parameters: supported }],
});

beforeAll(async () => {
  chat = await startFakeChat(() => ({ content: "Paris is sunny." }));
  router = await startFakeChat(() => ({ content: "Paris is sunny." }));
  claude = await startFakeAnthropic();
  gemini = await startReplayProvider(join(import.meta.dirname, "fixtures/google"), () => ({ file: "generate.json" }));
  const catalog = {
    providers: [
      { slug: "open", name: "Open", adapter: "openai-compatible", base_url: chat.baseUrl, requires_api_key: false },
      { slug: "router", name: "Router", adapter: "openai-compatible", base_url: router.baseUrl, requires_api_key: false, relays_reasoning: true },
      { slug: "claude", name: "Claude", adapter: "anthropic", base_url: claude.baseUrl, api_key_env: "CLAUDE_KEY" },
      { slug: "gemini", name: "Gemini", adapter: "google", base_url: gemini.baseUrl, api_key_env: "GEMINI_KEY" },
    ],
    models: [model("vendor/compat", "open", "text"), model("vendor/routed", "router", "text"), model("anthropic/text", "claude", "text"), model("google/text", "gemini", "text")],
  };
  gw = await startTestGateway({ ...(await catalogEnv(catalog)), CLAUDE_KEY: "claude-secret", GEMINI_KEY: "gemini-secret" });
  const key = String((await gw.call("POST", "/keys", { body: { name: "reasoning-home" } })).body.key);
  client = new Anthropic({ apiKey: key, baseURL: `${gw.baseUrl}/api`, maxRetries: 0 });
}, 60_000);
afterAll(async () => {
  await gw?.stop();
  await Promise.all([chat?.stop(), router?.stop(), claude?.stop(), gemini?.stop()]);
});

const weather = { name: "get_weather", description: "Weather by city", input_schema: { type: "object" as const, properties: { city: { type: "string" } }, required: ["city"] } };
const anthropicSignature = "EqQBCkYIBhgCIkBanthropic-signature";
const anthropicRedacted = "EmwKAhgBEgy3anthropic-redacted";
const openAiEncrypted = "gAAAAB-openai-encrypted";
const geminiSignature = "CiIBVKhc7oDTmE0jbiHhOj0RrhbuVcLI";
const plainThought = "The user asked before; plain reasoning text.";

/**
 * An earlier assistant turn as Claude Code sends it back: Anthropic's signed and redacted thinking, OpenAI's
 * encrypted reasoning and Gemini's signature of the call (both wrapped by the gateway's answer), reasoning
 * text with no signature, words and the call whose result follows.
 */
const earlierTurn = [
  { type: "thinking", thinking: "Claude weighs the cities.", signature: anthropicSignature },
  { type: "redacted_thinking", data: anthropicRedacted },
  { type: "redacted_thinking", data: `switchyard:openai-responses-v1:rs_1:${openAiEncrypted}` },
  { type: "redacted_thinking", data: `switchyard:google-gemini-v1:call_1:${geminiSignature}` },
  { type: "thinking", thinking: plainThought, signature: "" },
  { type: "text", text: "Checking." },
  { type: "tool_use", id: "call_1", name: "get_weather", input: { city: "Paris" } },
] as Anthropic.ContentBlockParam[];

const conversation: Anthropic.MessageParam[] = [
  { role: "user", content: "Weather in Paris?" },
  { role: "assistant", content: earlierTurn },
  { role: "user", content: [{ type: "tool_result", tool_use_id: "call_1", content: "sunny" }] },
];

const ask = (modelId: string, extraTools: Json[] = []) =>
  client.messages.create({ model: modelId, max_tokens: 200, tools: [weather, ...extraTools], messages: conversation } as Anthropic.MessageCreateParamsNonStreaming);

describe("reasoning sent back through the Messages API", () => {
  it("reaches an OpenAI-compatible endpoint only as reasoning text without a signature", async () => {
    await ask("vendor/compat");
    const messages = chat.requests.at(-1)!.messages as Json[];
    expect(messages.map((m) => m.role)).toEqual(["user", "assistant", "tool"]);
    expect(messages[1]).toEqual({
      role: "assistant",
      content: [{ type: "text", text: "Checking." }],
      tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }],
      reasoning_details: [{ type: "reasoning.text", text: plainThought }],
    });
    const sent = JSON.stringify(chat.requests.at(-1));
    for (const secret of [anthropicSignature, anthropicRedacted, openAiEncrypted, geminiSignature, "own_provider_only"]) expect(sent).not.toContain(secret);
  });

  it("reaches a router that relays reasoning (relays_reasoning) whole, each entry with its format", async () => {
    await ask("vendor/routed");
    const messages = router.requests.at(-1)!.messages as Json[];
    expect(messages[1]!.reasoning_details).toEqual([
      { type: "reasoning.text", text: "Claude weighs the cities.", signature: anthropicSignature, format: "anthropic-claude-v1" },
      { type: "reasoning.encrypted", data: anthropicRedacted, format: "anthropic-claude-v1" },
      { type: "reasoning.encrypted", data: openAiEncrypted, format: "openai-responses-v1", id: "rs_1" },
      { type: "reasoning.encrypted", data: geminiSignature, format: "google-gemini-v1", id: "call_1" },
      { type: "reasoning.text", text: plainThought },
    ]);
    expect(JSON.stringify(router.requests.at(-1))).not.toContain("own_provider_only");
  });

  it("leaves out an assistant turn that held only bound reasoning, for an OpenAI-compatible endpoint", async () => {
    const onlyReasoning = earlierTurn.filter((b) => b.type === "redacted_thinking");
    await client.messages.create({ model: "vendor/compat", max_tokens: 200, messages: [{ role: "user", content: "Write a story" }, { role: "assistant", content: onlyReasoning }, { role: "user", content: "Go on" }] });
    expect(chat.requests.at(-1)!.messages).toEqual([
      { role: "user", content: "Write a story" },
      { role: "user", content: "Go on" },
    ]);
  });

  it("reaches Gemini as the thought signature of its call alone", async () => {
    await ask("google/text");
    const sent = gemini.requests.at(-1)!.body;
    const contents = sent.contents as Array<{ role: string; parts: Json[] }>;
    expect(contents[1]!.parts).toContainEqual({ functionCall: { name: "get_weather", args: { city: "Paris" } }, thoughtSignature: geminiSignature });
    const text = JSON.stringify(sent);
    for (const secret of [anthropicSignature, anthropicRedacted, openAiEncrypted, "own_provider_only"]) expect(text).not.toContain(secret);
  });

  it("reaches Anthropic's translation as its own thinking and redacted thinking alone", async () => {
    // A server tool of the gateway makes Anthropic's endpoint get the translation rather than the client's body.
    await ask("anthropic/text", [{ type: "openrouter:datetime" }]);
    const messages = claude.requests.at(-1)!.body.messages as Array<{ role: string; content: Json[] }>;
    expect(messages[1]).toEqual({
      role: "assistant",
      content: [
        { type: "thinking", thinking: "Claude weighs the cities.", signature: anthropicSignature },
        { type: "redacted_thinking", data: anthropicRedacted },
        { type: "text", text: "Checking." },
        { type: "tool_use", id: "call_1", name: "get_weather", input: { city: "Paris" } },
      ],
    });
    const text = JSON.stringify(claude.requests.at(-1)!.body);
    for (const secret of [openAiEncrypted, geminiSignature, "own_provider_only"]) expect(text).not.toContain(secret);
  });

  it("reaches Anthropic's endpoint in the client's own body, as sent", async () => {
    await ask("anthropic/text");
    const sent = claude.requests.at(-1)!.body;
    expect(sent.messages).toEqual(conversation);
  });
});
