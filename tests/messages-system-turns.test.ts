import type { MessageParam } from "@anthropic-ai/sdk/resources/messages";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMessagesGateway, type MessagesFixture } from "./support/messages-fixture.js";

/**
 * System turns among the messages (`{"role": "system"}`, the Anthropic SDK's `SystemMessageParam`), as Claude
 * Code sends its environment after the first user turn: Anthropic endpoints get them as sent; the others get
 * them as chat's system messages, in their place.
 */

let fx: MessagesFixture;

beforeAll(async () => {
  fx = await startMessagesGateway();
});
afterAll(async () => {
  await fx?.stop();
});

const environment = "# Environment\nPrimary working directory: /work";
const messages: MessageParam[] = [
  { role: "user", content: [{ type: "text", text: "Say hello" }] },
  { role: "system", content: [{ type: "text", text: environment }] },
];

describe("system turns among the messages", () => {
  it("reach Anthropic endpoints as sent", async () => {
    const answer = await fx.client.messages.create({ model: "anthropic/text", max_tokens: 1024, messages });
    expect(answer.type).toBe("message");
    expect(fx.claude.requests.at(-1)!.body.messages).toEqual(messages);
  });

  it("reach other endpoints as chat's system messages in their place, buffered and streamed", async () => {
    await fx.client.messages.create({ model: "openai/compat", max_tokens: 1024, messages: [...messages, { role: "system", content: "Be brief." }] });
    const sent = fx.compat.requests.at(-1)!.body.messages as unknown[];
    expect(sent).toEqual([
      { role: "user", content: [{ type: "text", text: "Say hello" }] },
      { role: "system", content: [{ type: "text", text: environment }] },
      { role: "system", content: "Be brief." },
    ]);
    const streamed = await fx.client.messages.stream({ model: "openai/compat", max_tokens: 1024, messages }).finalMessage();
    expect(streamed.stop_reason).toBe("end_turn");
    expect(fx.compat.requests.at(-1)!.body.messages).toEqual(sent.slice(0, 2));
  });

  it("are counted by count_tokens", async () => {
    const counted = await fx.client.messages.countTokens({ model: "anthropic/text", messages });
    expect(counted.input_tokens).toBeGreaterThan(0);
  });

  it("hold text only", async () => {
    const image = { type: "image", source: { type: "url", url: "https://example.com/a.png" } };
    const error = await fx.client.messages.create({ model: "openai/compat", max_tokens: 1024, messages: [messages[0]!, { role: "system", content: [image] } as unknown as MessageParam] }).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 400, message: expect.stringMatching(/messages\.1\.content/) });
  });
});
