import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentCommand, runAgent } from "./support/agent-cli.js";
import { greeting } from "./support/fake-anthropic.js";
import { startMessagesGateway, type MessagesFixture } from "./support/messages-fixture.js";

/**
 * Claude Code itself (`@anthropic-ai/claude-code`, which `.ci/run` installs from the npm registry) pointed at
 * the gateway as its users point it: ANTHROPIC_BASE_URL=<gateway>/api, the key as ANTHROPIC_AUTH_TOKEN, the
 * model chosen with ANTHROPIC_MODEL. One headless turn (`claude -p`) on a model served by an Anthropic
 * endpoint (the client's body as sent) and on one served by an OpenAI-compatible endpoint (the translation),
 * each answered at the first request: every request Claude Code sends is taken as it is.
 */

const claude = agentCommand("claude");
let fx: MessagesFixture;

beforeAll(async () => {
  if (claude) fx = await startMessagesGateway();
}, 60_000);
afterAll(async () => {
  await fx?.stop();
});

interface Result {
  is_error: boolean;
  result: string;
  num_turns: number;
}

async function oneTurn(model: string): Promise<Result> {
  const env = {
    ANTHROPIC_BASE_URL: `${fx.gw.baseUrl}/api`,
    ANTHROPIC_AUTH_TOKEN: fx.key,
    ANTHROPIC_API_KEY: "",
    ANTHROPIC_MODEL: model,
    ANTHROPIC_SMALL_FAST_MODEL: model,
    // No update checks, telemetry or other traffic than the gateway's.
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_AUTOUPDATER: "1",
    DISABLE_TELEMETRY: "1",
  };
  const run = await runAgent(claude!, ["-p", "Say hello", "--output-format", "json"], env);
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
    expect(sent[0]!.body).toMatchObject({ thinking: { display: expect.any(String) }, context_management: { edits: expect.any(Array) } });
  });

  it("answers on an OpenAI-compatible endpoint, through the translation", async () => {
    const before = fx.compat.requests.length;
    const result = await oneTurn("openai/compat");
    expect(result).toMatchObject({ is_error: false, result: "Hello from compat" });
    const sent = fx.compat.requests.slice(before);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.body).toMatchObject({ model: "ok", tools: expect.arrayContaining([expect.objectContaining({ type: "function" })]) });
  });
});
