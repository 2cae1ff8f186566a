import Anthropic from "@anthropic-ai/sdk";
import type { MessageCreateParamsNonStreaming } from "@anthropic-ai/sdk/resources/messages";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { startFakeAnthropic, type FakeAnthropic } from "./support/fake-anthropic.js";
import { startFakeChat, type FakeChat } from "./support/fake-chat-script.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";

/**
 * `thinking.display` (Claude Code sends `"omitted"` on every turn): Anthropic endpoints get it with the
 * client's body and apply it; on the other endpoints the gateway applies it to the answer it writes, so an
 * omitted thinking block keeps its signature and loses its text, and reasoning without a signature, which
 * would be an empty block, is left out.
 */

let gw: TestGateway;
let chat: FakeChat;
let claude: FakeAnthropic;
let client: Anthropic;

const thought = "The user wants a greeting; keep it short.";
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
  chat = await startFakeChat((body) => ({ content: "Hello!", reasoning: thought, ...(body.model === "signed" ? { signature: "sig-123" } : {}) }));
  claude = await startFakeAnthropic();
  const catalog = {
    providers: [
      { slug: "open", name: "Open", adapter: "openai-compatible", base_url: chat.baseUrl, requires_api_key: false },
      { slug: "claude", name: "Claude", adapter: "anthropic", base_url: claude.baseUrl, api_key_env: "CLAUDE_KEY" },
    ],
    models: [model("vendor/plain", "open", "plain"), model("vendor/signed", "open", "signed"), model("anthropic/text", "claude", "text")],
  };
  gw = await startTestGateway({ ...(await catalogEnv(catalog)), CLAUDE_KEY: "claude-secret" });
  const key = String((await gw.call("POST", "/keys", { body: { name: "thinking-display" } })).body.key);
  client = new Anthropic({ apiKey: key, baseURL: `${gw.baseUrl}/api`, maxRetries: 0 });
}, 60_000);
afterAll(async () => {
  await gw?.stop();
  await Promise.all([chat?.stop(), claude?.stop()]);
});

const ask = (modelId: string, thinking: MessageCreateParamsNonStreaming["thinking"]): MessageCreateParamsNonStreaming => ({
  model: modelId,
  max_tokens: 2048,
  thinking,
  messages: [{ role: "user", content: "Say hello" }],
});

/** The streamed message's blocks as the SDK assembles them, and the kinds of deltas that came. */
async function streamed(params: MessageCreateParamsNonStreaming) {
  const stream = client.messages.stream(params);
  const deltas = new Set<string>();
  stream.on("streamEvent", (event) => {
    if (event.type === "content_block_delta") deltas.add(event.delta.type);
  });
  const message = await stream.finalMessage();
  return { content: message.content, deltas: [...deltas].sort() };
}

describe("thinking.display", () => {
  it("reaches Anthropic endpoints with the client's body, for enabled and adaptive thinking", async () => {
    const before = claude.requests.length;
    await client.messages.create(ask("anthropic/text", { type: "enabled", budget_tokens: 1024, display: "omitted" }));
    await client.messages.create(ask("anthropic/text", { type: "adaptive", display: "summarized" }));
    const sent = claude.requests.slice(before).map((r) => r.body.thinking);
    expect(sent).toEqual([
      { type: "enabled", budget_tokens: 1024, display: "omitted" },
      { type: "adaptive", display: "summarized" },
    ]);
  });

  it("omitted: a signed block keeps its signature without its text, buffered and streamed", async () => {
    const params = ask("vendor/signed", { type: "enabled", budget_tokens: 1024, display: "omitted" });
    const answer = await client.messages.create(params);
    expect(answer.content).toEqual([
      { type: "thinking", thinking: "", signature: expect.stringContaining("sig-123") },
      { type: "text", text: "Hello!" },
    ]);
    const { content, deltas } = await streamed(params);
    expect(content).toEqual(answer.content);
    expect(deltas).toEqual(["signature_delta", "text_delta"]);
  });

  it("omitted: reasoning without a signature is left out, buffered and streamed", async () => {
    const params = ask("vendor/plain", { type: "adaptive", display: "omitted" });
    const answer = await client.messages.create(params);
    expect(answer.content).toEqual([{ type: "text", text: "Hello!" }]);
    const { content, deltas } = await streamed(params);
    expect(content).toEqual([{ type: "text", text: "Hello!" }]);
    expect(deltas).toEqual(["text_delta"]);
  });

  it("updates (Claude Code's interactive sessions): Anthropic endpoints get it; elsewhere reasoning is omitted, having no progress notes", async () => {
    const updates = { type: "enabled", budget_tokens: 1024, display: "updates" } as unknown as MessageCreateParamsNonStreaming["thinking"];
    const before = claude.requests.length;
    await client.messages.create(ask("anthropic/text", updates));
    expect(claude.requests.slice(before).map((r) => r.body.thinking)).toEqual([updates]);
    const answer = await client.messages.create(ask("vendor/signed", updates));
    expect(answer.content).toEqual([
      { type: "thinking", thinking: "", signature: expect.stringContaining("sig-123") },
      { type: "text", text: "Hello!" },
    ]);
    const { deltas } = await streamed(ask("vendor/plain", updates));
    expect(deltas).toEqual(["text_delta"]);
  });

  it("summarized, or not given: the thinking text is written", async () => {
    for (const thinking of [{ type: "enabled", budget_tokens: 1024, display: "summarized" }, { type: "enabled", budget_tokens: 1024 }] as const) {
      const answer = await client.messages.create(ask("vendor/plain", thinking));
      expect(answer.content[0]).toMatchObject({ type: "thinking", thinking: thought });
      const { deltas } = await streamed(ask("vendor/plain", thinking));
      expect(deltas).toContain("thinking_delta");
    }
  });

  it("refuses a display the API does not define", async () => {
    const error = await client.messages.create(ask("vendor/plain", { type: "enabled", budget_tokens: 1024, display: "verbose" as "omitted" })).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 400, message: expect.stringMatching(/thinking\.display/) });
  });
});
