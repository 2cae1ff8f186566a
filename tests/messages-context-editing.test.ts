import type { MessageCreateParamsNonStreaming, MessageParam } from "@anthropic-ai/sdk/resources/messages";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMessagesGateway, type MessagesFixture } from "./support/messages-fixture.js";

/**
 * `context_management` (Claude Code sends `{"edits": [{"type": "clear_thinking_20251015", "keep": "all"}]}`
 * on every turn): Anthropic endpoints get it with the client's body and apply it; for the others the gateway
 * applies thinking clearing to the translation itself. Edits it cannot apply leave those endpoints out.
 */

let fx: MessagesFixture;

beforeAll(async () => {
  fx = await startMessagesGateway();
});
afterAll(async () => {
  await fx?.stop();
});

const history: MessageParam[] = [
  { role: "user", content: "First question" },
  { role: "assistant", content: [{ type: "thinking", thinking: "Thought one", signature: "" }, { type: "text", text: "Answer one" }] },
  { role: "user", content: "Second question" },
  { role: "assistant", content: [{ type: "thinking", thinking: "Thought two", signature: "" }, { type: "text", text: "Answer two" }] },
  { role: "user", content: "Third question" },
];

type Edits = Array<Record<string, unknown>>;
const ask = (model: string, edits: Edits) =>
  ({ model, max_tokens: 1024, messages: history, context_management: { edits } }) as unknown as MessageCreateParamsNonStreaming;

/** The reasoning text of each assistant message the OpenAI-compatible endpoint got last. */
function reasoningSent(): unknown[] {
  const messages = fx.compat.requests.at(-1)!.body.messages as Array<{ role: string; reasoning_details?: Array<{ text?: string }> }>;
  return messages.filter((m) => m.role === "assistant").map((m) => m.reasoning_details?.map((d) => d.text) ?? null);
}

describe("context_management on endpoints other than Anthropic's", () => {
  it("keeps every thinking block with keep: all, as Claude Code asks", async () => {
    const answer = await fx.client.messages.create(ask("openai/compat", [{ type: "clear_thinking_20251015", keep: "all" }]));
    expect(answer.type).toBe("message");
    expect(reasoningSent()).toEqual([["Thought one"], ["Thought two"]]);
  });

  it("clears thinking of all but the last turns kept, streamed too", async () => {
    await fx.client.messages.create(ask("openai/compat", [{ type: "clear_thinking_20251015", keep: { type: "thinking_turns", value: 1 } }]));
    expect(reasoningSent()).toEqual([null, ["Thought two"]]);
    await fx.client.messages.stream(ask("openai/compat", [{ type: "clear_thinking_20251015", keep: { type: "thinking_turns", value: 1 } }])).finalMessage();
    expect(reasoningSent()).toEqual([null, ["Thought two"]]);
  });

  it("leaves them out for an edit the gateway does not apply", async () => {
    const error = await fx.client.messages.create(ask("openai/compat", [{ type: "clear_tool_uses_20250919" }])).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 400, message: expect.stringMatching(/context_management/) });
  });

  it("reach Anthropic endpoints as sent", async () => {
    const edits = [{ type: "clear_thinking_20251015", keep: { type: "thinking_turns", value: 1 } }];
    await fx.client.messages.create(ask("anthropic/text", edits));
    expect(fx.claude.requests.at(-1)!.body).toMatchObject({ context_management: { edits }, messages: history });
  });
});

describe("safeguards (Claude Code's dangerous tool use classifier, in its auto mode)", () => {
  const safeguards = [{ type: "dangerous_tool_use", classifier_context: { v: 1, permission_mode: "auto", platform: "linux" } }];
  const withSafeguards = (model: string) => ({ model, max_tokens: 1024, messages: history, safeguards }) as unknown as MessageCreateParamsNonStreaming;

  it("reach Anthropic endpoints as sent", async () => {
    await fx.client.messages.create(withSafeguards("anthropic/text"));
    expect(fx.claude.requests.at(-1)!.body).toMatchObject({ safeguards });
  });

  it("leave out endpoints that cannot run Anthropic's classifier", async () => {
    const error = await fx.client.messages.create(withSafeguards("openai/compat")).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 400, message: expect.stringMatching(/safeguards: Anthropic's own setting/) });
  });
});
