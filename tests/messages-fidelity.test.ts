import type Anthropic from "@anthropic-ai/sdk";
import type { MessageParam, MessageStreamEvent } from "@anthropic-ai/sdk/resources/messages";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { citation, citedBlocks, interleavedBlocks } from "./support/fake-anthropic.js";
import { refusalText, startMessagesGateway, type MessagesFixture } from "./support/messages-fixture.js";

/**
 * What a provider answered reaches the Messages client as it said it: an Anthropic endpoint's blocks in their
 * order with their citations, an OpenAI-compatible endpoint's refusal as a refusal, and a stop for a full context
 * window as a stop for length to the clients of the other dialects.
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

const document = { type: "document" as const, source: { type: "text" as const, media_type: "text/plain" as const, data: "The grass is green. The sky is blue." }, title: "Colours", citations: { enabled: true } };
const asked: MessageParam[] = [{ role: "user", content: [document, { type: "text", text: "What colour is the grass?" }] }];
const weatherTool = { name: "get_weather", description: "Weather by city", input_schema: { type: "object" as const, properties: { city: { type: "string" } } } };

/** A stream's events in order, and its final message. */
async function streamed(params: Anthropic.MessageStreamParams) {
  const stream = client.messages.stream(params);
  const events: MessageStreamEvent[] = [];
  stream.on("streamEvent", (event) => events.push(event));
  return { events, message: await stream.finalMessage() };
}

describe("an Anthropic endpoint's answer, block for block", () => {
  it("keeps text blocks apart with their citations, buffered and streamed", async () => {
    const params = { model: "anthropic/cited", max_tokens: 200, messages: asked };
    const message = await client.messages.create(params);
    expect(message.content).toEqual(citedBlocks);
    expect(message.stop_reason).toBe("end_turn");

    const { events, message: final } = await streamed(params);
    expect(final.content).toEqual(citedBlocks);
    const cited = events.filter((e) => e.type === "content_block_delta" && e.delta.type === "citations_delta");
    expect(cited).toEqual([{ type: "content_block_delta", index: 1, delta: { type: "citations_delta", citation } }]);
    expect(events.filter((e) => e.type === "content_block_start").map((e) => e.index)).toEqual([0, 1]);
  });

  it("keeps interleaved thinking, words and tool calls in the order given, buffered and streamed", async () => {
    const params = { model: "anthropic/interleaved", max_tokens: 4000, thinking: { type: "enabled" as const, budget_tokens: 1024 }, tools: [weatherTool], messages: [{ role: "user" as const, content: "Weather in Paris and Lyon?" }] };
    const headers = { "anthropic-beta": "interleaved-thinking-2025-05-14" };
    const expected = interleavedBlocks(weatherTool.name);
    const message = await client.messages.create(params, { headers });
    expect(message.content).toEqual(expected);
    expect(message.stop_reason).toBe("tool_use");

    const { message: final } = await streamed({ ...params });
    expect(final.content).toEqual(expected);
    expect(final.stop_reason).toBe("tool_use");
  });
});

describe("an OpenAI-compatible endpoint's refusal", () => {
  it("is a text block with stop_reason refusal, buffered and streamed", async () => {
    const params = { model: "openai/refuses", max_tokens: 100, messages: [{ role: "user" as const, content: "Something it declines" }] };
    const message = await client.messages.create(params);
    expect(message.content).toEqual([{ type: "text", text: refusalText }]);
    expect(message.stop_reason).toBe("refusal");

    const { events, message: final } = await streamed(params);
    expect(final.content).toEqual([{ type: "text", text: refusalText }]);
    expect(final.stop_reason).toBe("refusal");
    const deltas = events.flatMap((e) => (e.type === "content_block_delta" && e.delta.type === "text_delta" ? [e.delta.text] : []));
    expect(deltas.join("")).toBe(refusalText);
  });
});

describe("an Anthropic endpoint's stop for a full context window", () => {
  it("is a stop for length to chat and an incomplete response to Responses, and passes through to Messages", async () => {
    const openai = new OpenAI({ apiKey: fx.key, baseURL: fx.gw.apiUrl, maxRetries: 0 });
    const chat = await openai.chat.completions.create({ model: "anthropic/window-full", max_tokens: 100, messages: [{ role: "user", content: "Hi" }] });
    expect(chat.choices[0]?.finish_reason).toBe("length");
    const chunks = await openai.chat.completions.create({ model: "anthropic/window-full", max_tokens: 100, stream: true, messages: [{ role: "user", content: "Hi" }] });
    let finish: string | null = null;
    for await (const chunk of chunks) finish = chunk.choices[0]?.finish_reason ?? finish;
    expect(finish).toBe("length");

    const response = await openai.responses.create({ model: "anthropic/window-full", max_output_tokens: 100, input: "Hi" });
    expect(response.status).toBe("incomplete");
    expect(response.incomplete_details).toEqual({ reason: "max_output_tokens" });

    const message = await client.messages.create({ model: "anthropic/window-full", max_tokens: 100, messages: [{ role: "user", content: "Hi" }] });
    expect(message.stop_reason).toBe("model_context_window_exceeded");
  });
});
