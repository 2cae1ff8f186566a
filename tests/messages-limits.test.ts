import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMessagesGateway, type MessagesFixture } from "./support/messages-fixture.js";

/**
 * The limits of Anthropic's Messages API, and no others: every stop sequence the client gives where the
 * request goes to Anthropic as sent (endpoints that take fewer are left out, or named in the 400), and a
 * thinking budget below max_tokens whatever the endpoint.
 */
let fx: MessagesFixture;
let client: Anthropic;

beforeAll(async () => {
  fx = await startMessagesGateway();
  client = fx.client;
});
afterAll(async () => {
  await fx?.stop();
});

const hi = [{ role: "user" as const, content: "Hi" }];
const six = ["ONE", "TWO", "THREE", "FOUR", "FIVE", "SIX"];
const thrown = (call: Promise<unknown>) => call.then(() => undefined, (e: unknown) => e);
const sentCount = () => fx.claude.requests.length + fx.compat.requests.length;

describe("stop_sequences", () => {
  it("reach an Anthropic endpoint all of them, buffered and streamed", async () => {
    await client.messages.create({ model: "anthropic/text", max_tokens: 50, stop_sequences: six, messages: hi });
    expect(fx.claude.requests.at(-1)!.body.stop_sequences).toEqual(six);
    await client.messages.stream({ model: "anthropic/text", max_tokens: 50, stop_sequences: six, messages: hi }).finalMessage();
    expect(fx.claude.requests.at(-1)!.body).toMatchObject({ stream: true, stop_sequences: six });
  });

  it("leave out an endpoint that takes at most 4, and name its limit when no endpoint is left", async () => {
    const served = await client.messages.create({ model: "openai/compat", models: ["anthropic/text"], max_tokens: 50, stop_sequences: six, messages: hi } as Anthropic.MessageCreateParamsNonStreaming);
    expect(served.model).toBe("anthropic/text");
    expect(fx.claude.requests.at(-1)!.body.stop_sequences).toEqual(six);

    const before = sentCount();
    const refused = await thrown(client.messages.create({ model: "openai/compat", max_tokens: 50, stop_sequences: six, messages: hi }));
    expect(refused).toBeInstanceOf(Anthropic.BadRequestError);
    expect(refused).toMatchObject({ type: "invalid_request_error", apiMessage: expect.stringMatching(/stop_sequences: 6 given.*at most 4/) });
    // Where the gateway translates the request (it runs a server tool), Anthropic endpoints are no exception.
    const translated = await thrown(client.messages.create({ model: "anthropic/text", max_tokens: 50, stop_sequences: six, tools: [{ type: "openrouter:datetime" }], messages: hi } as unknown as Anthropic.MessageCreateParamsNonStreaming));
    expect(translated).toMatchObject({ status: 400, apiMessage: expect.stringMatching(/stop_sequences: 6 given.*at most 4/) });
    expect(sentCount()).toBe(before);

    await client.messages.create({ model: "openai/compat", max_tokens: 50, stop_sequences: six.slice(0, 4), messages: hi });
    expect(fx.compat.requests.at(-1)!.body.stop).toEqual(six.slice(0, 4));
  });
});

describe("thinking.budget_tokens", () => {
  it("must be less than max_tokens, on every endpoint, buffered and streamed", async () => {
    const before = sentCount();
    for (const model of ["anthropic/text", "openai/compat"]) {
      for (const budget of [2000, 1500]) {
        const params = { model, max_tokens: 1500, thinking: { type: "enabled" as const, budget_tokens: budget }, messages: hi };
        for (const call of [() => client.messages.create(params), () => client.messages.stream(params).finalMessage()]) {
          const error = await thrown(call());
          expect(error, `${model} ${budget}`).toBeInstanceOf(Anthropic.BadRequestError);
          expect(error).toMatchObject({ type: "invalid_request_error", apiMessage: expect.stringMatching(/thinking\.budget_tokens: must be less than max_tokens \(1500\)/) });
        }
      }
    }
    expect(sentCount()).toBe(before);
    const fine = await client.messages.create({ model: "anthropic/text", max_tokens: 1500, thinking: { type: "enabled", budget_tokens: 1499 }, messages: hi });
    expect(fine.content[0]).toMatchObject({ type: "thinking" });
  });
});
