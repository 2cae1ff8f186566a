import { messagesRequest, type MessagesRequest } from "@switchyard/contracts";
import { describe, expect, it } from "vitest";
import { anthropicHeaders, messagesWire, nativeBody } from "./native.js";
import { toChatRequest } from "./request.js";

type Json = Record<string, unknown>;

const ephemeral = { type: "ephemeral" } as const;

/** A body as the client sent it, with defaults for what every request has. */
const sentOf = (body: Json): Json => ({ model: "claude-sonnet-4-5-20250929", max_tokens: 1024, messages: [{ role: "user", content: "Hi" }], ...body });
/** A body as the client sent it and its parse, as the route has both. */
function received(body: Json): { request: MessagesRequest; sent: Json } {
  const sent = sentOf(body);
  return { request: messagesRequest.parse(structuredClone(sent)), sent };
}

/** The chat body an endpoint would get: the mapped request with what the plan changed. */
const chatFor = (request: MessagesRequest, changes: Json = {}): Json => {
  const chat: Json = { ...toChatRequest(request).chat, ...changes };
  for (const [name, value] of Object.entries(changes)) if (value === undefined) delete chat[name];
  return chat;
};

/** The native body of a request as sent, with the plan's changes to its chat body. */
function nativeOf(body: Json, changes: Json = {}): { native: Json; request: MessagesRequest; sent: Json } {
  const { request, sent } = received(body);
  return { native: nativeBody(request, sent, chatFor(request, changes)), request, sent };
}

const system = [{ type: "text" as const, text: "You are terse.", cache_control: { type: "ephemeral" as const, ttl: "1h" as const } }];
const tools = [
  { name: "get_weather", description: "Weather", input_schema: { type: "object", properties: { city: { type: "string" } } }, cache_control: ephemeral },
  { type: "bash_20250124", name: "bash" },
];
const conversation = [
  { role: "user", content: [{ type: "text", text: "Weather in Paris?" }] },
  {
    role: "assistant",
    content: [
      { type: "thinking", thinking: "Use the tool.", signature: "sig-1" },
      { type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Paris" } },
    ],
  },
  { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "18°C" }] },
];

describe("nativeBody", () => {
  it("sends the client's own body without the gateway's fields, Anthropic's own kept in the client's order", () => {
    const { native } = nativeOf(
      {
        stream: true,
        system,
        models: ["anthropic/claude-opus-4"],
        provider: { order: ["anthropic"] },
        output_config: { effort: "high" },
        session_id: "s-1",
        trace: { trace_id: "t-1" },
        plugins: [{ id: "web" }],
        user: "u-raw",
        max_tokens: 4096,
        tools,
        tool_choice: { type: "auto", disable_parallel_tool_use: true },
        thinking: { type: "enabled", budget_tokens: 2048 },
        context_management: { edits: [{ type: "clear_tool_uses_20250919" }] },
        service_tier: "standard_only",
        metadata: { user_id: "u-raw" },
        cache_control: ephemeral,
        messages: conversation,
      },
      { user: "hashed-user" },
    );
    expect(Object.keys(native)).toEqual([
      "max_tokens",
      "messages",
      "system",
      "output_config",
      "tools",
      "tool_choice",
      "thinking",
      "context_management",
      "service_tier",
      "metadata",
    ]);
    expect(native).toEqual({
      max_tokens: 4096,
      messages: [conversation[0], conversation[1], { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "18°C", cache_control: ephemeral }] }],
      system,
      output_config: { effort: "high" },
      tools,
      tool_choice: { type: "auto", disable_parallel_tool_use: true },
      thinking: { type: "enabled", budget_tokens: 2048 },
      context_management: { edits: [{ type: "clear_tool_uses_20250919" }] },
      service_tier: "standard_only",
      metadata: { user_id: "hashed-user" },
    });
  });

  it("passes system, tools and messages as the very values the client sent, keys in its order", () => {
    // Keys in an order no schema lists them in, and a field the parse does not keep.
    const ownSystem = [{ cache_control: { ttl: "1h", type: "ephemeral" }, text: "You are terse.", type: "text" }];
    const ownTools = [{ input_schema: { properties: { city: { type: "string" } }, type: "object" }, name: "get_weather", description: "Weather" }];
    const ownMessages = [{ content: [{ text: "Hi", type: "text", citations: null }], role: "user" }];
    const { native, sent } = nativeOf({ messages: ownMessages, tools: ownTools, system: ownSystem, thinking: { type: "adaptive" }, output_config: { effort: "high" } });
    expect(native.system).toBe(sent.system);
    expect(native.tools).toBe(sent.tools);
    expect(native.messages).toBe(sent.messages);
    expect(native.thinking).toBe(sent.thinking);
    expect(JSON.stringify(native.system)).toBe(JSON.stringify(ownSystem));
    expect(JSON.stringify(native.tools)).toBe(JSON.stringify(ownTools));
    expect(JSON.stringify(native.messages)).toBe(JSON.stringify(ownMessages));
  });

  it("takes the sampling fields from the chat body: dropped where the endpoint does not support them", () => {
    const body = { temperature: 0.5, top_p: 0.9, top_k: 40, stop_sequences: ["END"] };
    expect(nativeOf(body).native).toEqual({ ...sentOf(body), model: undefined });
    const { native } = nativeOf(body, { temperature: undefined, top_k: null, stop: undefined });
    expect(native).toEqual({ max_tokens: 1024, messages: [{ role: "user", content: "Hi" }], top_p: 0.9 });
  });

  it("sends every stop sequence, more than the chat body carries, unless the endpoint drops them", () => {
    const stops = ["A", "B", "C", "D", "E", "F"];
    expect(nativeOf({ stop_sequences: stops }).native.stop_sequences).toEqual(stops);
    expect(nativeOf({ stop_sequences: stops }, { stop: undefined }).native).not.toHaveProperty("stop_sequences");
    expect(nativeOf({ stop_sequences: stops.slice(0, 4) }).native.stop_sequences).toEqual(stops.slice(0, 4));
  });

  it("takes a preset's settings from the chat body: a stop string as a list, its max tokens", () => {
    expect(nativeOf({}, { temperature: 0.1, stop: "DONE", max_tokens: undefined, max_completion_tokens: 512 }).native).toEqual({
      max_tokens: 512,
      messages: [{ role: "user", content: "Hi" }],
      temperature: 0.1,
      stop_sequences: ["DONE"],
    });
    expect(nativeOf({}, { max_tokens: 256 }).native.max_tokens).toBe(256);
    expect(nativeOf({}, { max_tokens: undefined }).native.max_tokens).toBe(1024);
  });

  it("sends the end user the gateway forwards, and no metadata without one", () => {
    expect(nativeOf({ metadata: { user_id: "alice" } }, { user: "ws-hash-of-alice" }).native.metadata).toEqual({ user_id: "ws-hash-of-alice" });
    expect(nativeOf({ metadata: { user_id: "alice" } }, { user: undefined }).native).not.toHaveProperty("metadata");
  });

  it("sends a preset's system prompt when the request has none, and only then", () => {
    const withPreset = (body: Json) => {
      const { request, sent } = received(body);
      const chat = chatFor(request);
      return nativeBody(request, sent, { ...chat, messages: [{ role: "system", content: [{ type: "text", text: "Preset rules" }] }, ...(chat.messages as Json[])] });
    };
    expect(withPreset({}).system).toEqual([{ type: "text", text: "Preset rules" }]);
    expect(withPreset({ system: "Mine" }).system).toBe("Mine");
    expect(nativeOf({}).native).not.toHaveProperty("system");
  });

  it("places a top-level cache marker on the last block that can carry one, copying only that message", () => {
    const hour = { type: "ephemeral", ttl: "1h" } as const;
    const last = { role: "assistant", content: [{ type: "text", text: "It is" }, { type: "thinking", thinking: "t", signature: "s" }] };
    const { native, sent, request } = nativeOf({ cache_control: hour, messages: [...conversation, last] });
    const before = JSON.stringify({ sent, request });
    const messages = native.messages as Json[];
    expect(native).not.toHaveProperty("cache_control");
    expect(messages.slice(0, 3).every((m, i) => m === (sent.messages as Json[])[i])).toBe(true);
    expect(messages[3]).toEqual({ role: "assistant", content: [{ type: "text", text: "It is", cache_control: hour }, { type: "thinking", thinking: "t", signature: "s" }] });
    expect(JSON.stringify({ sent, request })).toBe(before);
    expect(last.content[0]).toEqual({ type: "text", text: "It is" });

    const plain = nativeOf({ cache_control: ephemeral, messages: [{ role: "user", content: "Hi there" }] });
    expect(plain.native.messages).toEqual([{ role: "user", content: [{ type: "text", text: "Hi there", cache_control: ephemeral }] }]);
    expect((plain.sent.messages as Json[])[0]!.content).toBe("Hi there");

    // A block already marked keeps its own marker.
    const marked = [{ role: "user", content: [{ type: "text", text: "a", cache_control: ephemeral }] }];
    expect(nativeOf({ cache_control: hour, messages: marked }).native.messages).toEqual(marked);
  });
});

describe("anthropicHeaders and messagesWire", () => {
  it("forwards the client's version and beta headers only", () => {
    expect(anthropicHeaders({ "anthropic-version": "2023-06-01", "anthropic-beta": ["a-1", "b-2"], "x-api-key": "secret", authorization: "Bearer k" })).toEqual({
      "anthropic-version": "2023-06-01",
      "anthropic-beta": "a-1,b-2",
    });
    expect(anthropicHeaders({ "anthropic-version": "", "anthropic-beta": [] })).toEqual({});
  });

  it("is the messages wire, whose body is the native body of the chat body", () => {
    const { request, sent } = received({ temperature: 0.3 });
    const wire = messagesWire(request, sent, { "anthropic-beta": "interleaved-thinking-2025-05-14" });
    expect(wire.wire).toBe("messages");
    expect(wire.headers).toEqual({ "anthropic-beta": "interleaved-thinking-2025-05-14" });
    expect(wire.body(chatFor(request, { temperature: undefined }))).toEqual({ max_tokens: 1024, messages: [{ role: "user", content: "Hi" }] });
  });
});
