import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentCommand, runAgent } from "./support/agent-cli.js";
import { catalogEnv } from "./support/catalog-fixture.js";
import { greeting } from "./support/fake-anthropic.js";
import { startFakeChat, type FakeChat } from "./support/fake-chat-script.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";
import { startMessagesGateway, type MessagesFixture } from "./support/messages-fixture.js";

/**
 * Claude Code itself (`@anthropic-ai/claude-code`, which `.ci/run` installs from the npm registry) pointed at
 * the gateway as its users point it: ANTHROPIC_BASE_URL=<gateway>/api, the key as ANTHROPIC_AUTH_TOKEN, the
 * model chosen with ANTHROPIC_MODEL. One headless turn (`claude -p`) on a model served by an Anthropic
 * endpoint (the client's body as sent) and on one served by an OpenAI-compatible endpoint (the translation),
 * each answered at the first request: every request Claude Code sends is taken as it is. Then a turn in
 * which the model (an OpenAI-compatible endpoint) calls Claude Code's Bash tool, and Claude Code runs the
 * command and sends its output back.
 */

const claude = agentCommand("claude");
let fx: MessagesFixture;
/** A gateway whose one model calls Bash until it reads the command's output (`agent`). */
let tools: { gw: TestGateway; key: string };
let agent: FakeChat;

/** What the tool turns of a chat request said, as the endpoint got them. */
const toolOutput = (body: Record<string, unknown>): string =>
  (body.messages as Array<{ role: string; content: unknown }>)
    .filter((m) => m.role === "tool")
    .map((m) => JSON.stringify(m.content))
    .join(" ");

beforeAll(async () => {
  if (!claude) return;
  fx = await startMessagesGateway();
  agent = await startFakeChat((body) => {
    const output = toolOutput(body);
    if (output) return { content: `The command printed ${output.includes("switchyard-ok") ? "the word" : "something else"}.` };
    return { calls: [{ id: "call_1", name: "Bash", arguments: JSON.stringify({ command: "echo switchyard-ok", description: "Print a word" }) }] };
  });
  const pricing = { prompt: "0.000001", completion: "0.000002" };
  const catalog = {
    providers: [{ slug: "open", name: "Open", adapter: "openai-compatible", base_url: agent.baseUrl, requires_api_key: false }],
    models: [{ id: "vendor/agent", name: "agent", context_length: 200000, endpoints: [{ provider: "open", upstream_model: "agent", pricing, max_completion_tokens: 32000 }] }],
  };
  const gw = await startTestGateway(await catalogEnv(catalog));
  tools = { gw, key: String((await gw.call("POST", "/keys", { body: { name: "claude-code-tools" } })).body.key) };
}, 60_000);
afterAll(async () => {
  await fx?.stop();
  await tools?.gw.stop();
  await agent?.stop();
});

interface Result {
  is_error: boolean;
  result: string;
  num_turns: number;
}

async function oneTurn(model: string, gateway: { baseUrl: string; key: string } = { baseUrl: fx.gw.baseUrl, key: fx.key }, args: string[] = []): Promise<Result> {
  const env = {
    ANTHROPIC_BASE_URL: `${gateway.baseUrl}/api`,
    ANTHROPIC_AUTH_TOKEN: gateway.key,
    ANTHROPIC_API_KEY: "",
    ANTHROPIC_MODEL: model,
    ANTHROPIC_SMALL_FAST_MODEL: model,
    // No update checks, telemetry or other traffic than the gateway's.
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_AUTOUPDATER: "1",
    DISABLE_TELEMETRY: "1",
  };
  const run = await runAgent(claude!, ["-p", "Say hello", "--output-format", "json", ...args], env);
  expect(run.status, run.stderr || run.stdout).toBe(0);
  return JSON.parse(run.stdout) as Result;
}

describe.skipIf(!claude)("Claude Code through the gateway", () => {
  it("answers on an Anthropic endpoint, with its body as sent", async () => {
    const before = fx.claude.requests.length;
    const result = await oneTurn("anthropic/claude-sonnet-4.5");
    expect(result).toMatchObject({ is_error: false, result: greeting });
    const sent = fx.claude.requests.slice(before).filter((r) => r.path === "/v1/messages");
    expect(sent).toHaveLength(1);
    // What Claude Code asks of Anthropic reaches it: its thinking settings and its context editing.
    expect(sent[0]!.body).toMatchObject({ thinking: { display: "omitted" }, context_management: { edits: [{ type: "clear_thinking_20251015", keep: "all" }] } });
  });

  it("answers on an OpenAI-compatible endpoint, through the translation", async () => {
    const before = fx.compat.requests.length;
    const result = await oneTurn("openai/compat");
    expect(result).toMatchObject({ is_error: false, result: "Hello from compat" });
    const sent = fx.compat.requests.slice(before);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.body).toMatchObject({ model: "ok", tools: expect.arrayContaining([expect.objectContaining({ type: "function" })]) });
  });

  it("runs the Bash tool the model calls and sends its output back", async () => {
    const result = await oneTurn("vendor/agent", { baseUrl: tools.gw.baseUrl, key: tools.key }, ["--allowedTools", "Bash(echo:*)"]);
    expect(result).toMatchObject({ is_error: false, result: "The command printed the word.", num_turns: 2 });
    expect(agent.requests).toHaveLength(2);
    expect(agent.requests[1]!.messages).toEqual(expect.arrayContaining([expect.objectContaining({ role: "tool", tool_call_id: "call_1" })]));
  });
});
