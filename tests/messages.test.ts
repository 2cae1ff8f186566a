import Anthropic from "@anthropic-ai/sdk";
import type { ContentBlockParam, MessageParam, MessageStreamEvent, TextBlockParam, Tool } from "@anthropic-ai/sdk/resources/messages";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "./support/eventually.js";
import { greeting, signature, thinkingPieces, toolInput, type ReceivedRequest } from "./support/fake-anthropic.js";
import { endpointKey, startMessagesGateway, type MessagesFixture } from "./support/messages-fixture.js";

let fx: MessagesFixture;
let client: Anthropic;

beforeAll(async () => {
  fx = await startMessagesGateway();
  client = fx.client;
});
afterAll(async () => {
  await fx?.stop();
});

const upstream = (): ReceivedRequest => fx.claude.requests.at(-1)!;
const user = (content: MessageParam["content"]): MessageParam => ({ role: "user", content });
// Keys in the order people write them, not the schema's: name, input_schema, description.
const weatherTool = { name: "get_weather", input_schema: { type: "object" as const, properties: { city: { type: "string" } }, required: ["city"] }, description: "Weather by city" };

/** Every event of a stream, in order, and its final message. */
async function streamed(params: Anthropic.MessageStreamParams) {
  const stream = client.messages.stream(params);
  const events: MessageStreamEvent[] = [];
  stream.on("streamEvent", (event) => events.push(event));
  const message = await stream.finalMessage();
  return { stream, events, message };
}
const deltaTypes = (events: MessageStreamEvent[]) => events.flatMap((e) => (e.type === "content_block_delta" ? [e.delta.type] : []));

describe("messages.create through the router to an Anthropic endpoint", () => {
  it("sends system, tools and messages byte for byte, with the endpoint's key and the client's Anthropic headers", async () => {
    const system: TextBlockParam[] = [{ type: "text", text: "You are terse.", cache_control: { type: "ephemeral", ttl: "1h" } }];
    const tools: Tool[] = [{ ...weatherTool, cache_control: { type: "ephemeral", ttl: "1h" } }];
    const messages: MessageParam[] = [user("Earlier question"), { role: "assistant", content: "Earlier answer" }, user([{ type: "text", text: "Hi", cache_control: { type: "ephemeral" } }])];
    const beta = "token-efficient-tools-2025-02-19,prompt-caching-2024-07-31";
    // An older version than the adapter's own default (2023-06-01): the client's wins.
    const headers = { "anthropic-version": "2023-01-01", "anthropic-beta": beta };
    const { data: message, request_id } = await client.messages.create({ model: "anthropic/text", max_tokens: 100, system, tools, messages }, { headers }).withResponse();
    expect(message.content).toEqual([{ type: "text", text: greeting }]);
    expect(message).toMatchObject({ type: "message", role: "assistant", model: "anthropic/text", stop_reason: "end_turn", stop_sequence: null });
    expect(request_id).toBe(message.id);
    expect(message.usage).toMatchObject({ input_tokens: 12, output_tokens: 9, cache_creation_input_tokens: 2048, cache_read_input_tokens: 0 });

    const sent = upstream();
    expect(sent.path).toBe("/v1/messages");
    expect(sent.raw).toContain(`"system":${JSON.stringify(system)}`);
    expect(sent.raw).toContain(`"tools":${JSON.stringify(tools)}`);
    expect(sent.raw).toContain(`"messages":${JSON.stringify(messages)}`);
    expect(sent.body).toMatchObject({ model: "text", max_tokens: 100, stream: false });
    // The endpoint's key, never the client's; the client's own Anthropic headers.
    expect(sent.headers).toEqual({ apiKey: endpointKey, version: "2023-01-01", beta, authorization: undefined });
    expect(JSON.stringify(sent.allHeaders)).not.toContain(fx.key);

    // The same prompt again is read from the cache Anthropic wrote.
    const again = await client.messages.create({ model: "anthropic/text", max_tokens: 100, system, tools, messages });
    expect(again.usage).toMatchObject({ input_tokens: 12, cache_creation_input_tokens: 0, cache_read_input_tokens: 2048 });
  });

  it("takes the SDK's beta path (?beta=true) with its betas as anthropic-beta", async () => {
    const message = await client.beta.messages.create({ model: "anthropic/text", max_tokens: 50, betas: ["interleaved-thinking-2025-05-14", "context-1m-2025-08-07"], messages: [user("Hi")] });
    expect(message.content).toEqual([{ type: "text", text: greeting }]);
    expect(upstream().headers.beta).toBe("interleaved-thinking-2025-05-14,context-1m-2025-08-07");
  });

  it("puts a top-level cache_control on the last block and leaves the rest as sent", async () => {
    const history: MessageParam[] = [user("First"), { role: "assistant", content: "Sure" }];
    const last: TextBlockParam[] = [{ type: "text", text: "Hello" }, { type: "text", text: "again" }];
    await client.messages.create({ model: "anthropic/text", max_tokens: 50, cache_control: { type: "ephemeral", ttl: "5m" }, messages: [...history, user(last)] });
    const sent = upstream();
    expect(sent.raw).toContain(`"messages":${JSON.stringify(history).slice(0, -1)},`);
    expect(sent.body.messages).toEqual([...history, user([last[0]!, { ...last[1]!, cache_control: { type: "ephemeral", ttl: "5m" } }])]);
    expect(sent.body).not.toHaveProperty("cache_control");
  });

  it("sends metadata.user_id hashed, the same way for the same user", async () => {
    const userId = "user_4f1c0b9e_account_7d2a_session_0e5b";
    const ask = (id: string) => client.messages.create({ model: "anthropic/text", max_tokens: 20, metadata: { user_id: id }, messages: [user("Hi")] });
    await ask(userId);
    const hashed = (upstream().body.metadata as { user_id: string }).user_id;
    expect(hashed).toMatch(/^[0-9a-f]{32}$/);
    expect(upstream().raw).not.toContain(userId);
    await ask(userId);
    expect(upstream().body.metadata).toEqual({ user_id: hashed });
    await ask(`${userId}-other`);
    expect((upstream().body.metadata as { user_id: string }).user_id).not.toBe(hashed);
  });

  it("ends on a stop sequence, buffered and streamed", async () => {
    const params = { model: "anthropic/stop", max_tokens: 50, stop_sequences: ["STOP"], messages: [user("Count to ten")] };
    const buffered = await client.messages.create(params);
    expect(buffered).toMatchObject({ stop_reason: "stop_sequence", stop_sequence: "STOP" });
    expect(upstream().body.stop_sequences).toEqual(["STOP"]);
    const { message, events } = await streamed(params);
    expect(message).toMatchObject({ stop_reason: "stop_sequence", stop_sequence: "STOP" });
    expect(events.find((e) => e.type === "message_delta")).toMatchObject({ delta: { stop_reason: "stop_sequence", stop_sequence: "STOP" } });
  });
});

describe("messages.stream(...).finalMessage() through the router to an Anthropic endpoint", () => {
  it("streams text as Anthropic's events, in order", async () => {
    const texts: string[] = [];
    const stream = client.messages.stream({ model: "anthropic/text", max_tokens: 100, messages: [user("Hi")] });
    stream.on("text", (delta) => texts.push(delta));
    const events: string[] = [];
    let started: unknown;
    stream.on("streamEvent", (event) => {
      events.push(event.type);
      if (event.type === "message_start") started = { ...event.message.usage };
    });
    const message = await stream.finalMessage();
    expect(message.content).toEqual([{ type: "text", text: greeting }]);
    expect(texts.join("")).toBe(greeting);
    expect(texts.length).toBe(2);
    expect(events).toEqual(["message_start", "content_block_start", "content_block_delta", "content_block_delta", "content_block_stop", "message_delta", "message_stop"]);
    // The prompt's tokens are in message_start already, as Anthropic's own stream has them.
    expect(started).toEqual({
      input_tokens: 12,
      output_tokens: 0,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
    });
    expect(message.usage).toMatchObject({ input_tokens: 12, output_tokens: 9 });
    expect(stream.request_id).toBe(message.id);
    expect(upstream().body.stream).toBe(true);
  });

  it("streams thinking with its signature and a tool call as input_json_delta, and takes the round trip back", async () => {
    const params = { model: "anthropic/tools", max_tokens: 4000, thinking: { type: "enabled" as const, budget_tokens: 1024 }, tools: [weatherTool], messages: [user("Weather in Paris?")] };
    const stream = client.messages.stream(params);
    const json: string[] = [];
    const thinking: string[] = [];
    const signatures: string[] = [];
    stream.on("inputJson", (partial) => json.push(partial));
    stream.on("thinking", (delta) => thinking.push(delta));
    stream.on("signature", (s) => signatures.push(s));
    const events: MessageStreamEvent[] = [];
    stream.on("streamEvent", (event) => events.push(event));
    const first = await stream.finalMessage();
    expect(deltaTypes(events)).toEqual(["thinking_delta", "thinking_delta", "signature_delta", "input_json_delta", "input_json_delta"]);
    expect(thinking).toEqual(thinkingPieces);
    expect(signatures).toEqual([signature]);
    expect(json.join("")).toBe(JSON.stringify(toolInput));
    expect(first.stop_reason).toBe("tool_use");
    expect(first.content).toEqual([
      { type: "thinking", thinking: thinkingPieces.join(""), signature },
      { type: "tool_use", id: "toolu_fake_1", name: "get_weather", input: toolInput },
    ]);

    const result = user([{ type: "tool_result", tool_use_id: "toolu_fake_1", content: "sunny" }]);
    const turn: MessageParam[] = [...params.messages, { role: "assistant", content: first.content }, result];
    const second = await client.messages.stream({ ...params, messages: turn }).finalMessage();
    expect(second.content.at(-1)).toEqual({ type: "text", text: "The tool said: sunny" });
    // The signed thinking went back as the SDK handed it over.
    expect(upstream().raw).toContain(JSON.stringify(first.content));

    // Without it, Anthropic (and the fake) refuse the turn; the SDK gets its typed 400.
    const unsigned: MessageParam[] = [...params.messages, { role: "assistant", content: [first.content[1]!] }, result];
    const refused = await client.messages.create({ ...params, messages: unsigned }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(Anthropic.BadRequestError);
    expect(refused).toMatchObject({ status: 400, type: "invalid_request_error" });
  });

  it("sends images, base64 and url, as they came", async () => {
    const content: ContentBlockParam[] = [
      { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg==" } },
      { type: "image", source: { type: "url", url: "https://images.example.com/cat.jpg" } },
      { type: "text", text: "What are these?" },
    ];
    const message = await client.messages.stream({ model: "anthropic/image", max_tokens: 100, messages: [user(content)] }).finalMessage();
    expect(message.content).toEqual([{ type: "text", text: "I see 2 images." }]);
    expect(upstream().raw).toContain(`"content":${JSON.stringify(content)}`);
  });

  it("throws the error a stream fails with midway, after what it said", async () => {
    const stream = client.messages.stream({ model: "anthropic/mid-error", max_tokens: 100, messages: [user("Hi")] });
    const texts: string[] = [];
    stream.on("text", (delta) => texts.push(delta));
    const error = await stream.finalMessage().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.APIError);
    // Anthropic's own `error` event: the upstream said it is overloaded, which Claude Code retries on.
    expect(error).toMatchObject({ status: undefined, type: "overloaded_error", error: { type: "error", error: { type: "overloaded_error", message: "Provider returned error mid-stream" } } });
    expect(texts).toEqual([greeting.slice(0, Math.ceil(greeting.length / 2))]);
  });

  it("aborts the upstream request when the client aborts", async () => {
    const stream = client.messages.stream({ model: "anthropic/slow", max_tokens: 100, messages: [user("Take your time")] });
    const firstWords = new Promise<void>((resolve) => stream.once("text", () => resolve()));
    const outcome = stream.finalMessage().catch((e: unknown) => e);
    await firstWords;
    const received = upstream();
    expect(received.body.model).toBe("slow");
    expect(received.aborted).toBe(false);
    stream.abort();
    expect(await outcome).toBeInstanceOf(Anthropic.APIUserAbortError);
    // The fake keeps the stream open ten seconds; the gateway lets go of it at once.
    await eventually(async () => received.aborted, 2000);
  });
});
