import type { MessageCreateParamsNonStreaming } from "@anthropic-ai/sdk/resources/messages/messages";
import { parseInput } from "@switchyard/runtime";
import { describe, expect, it } from "vitest";
import { messageObject, messagesCountTokensRequest, messagesRequest, messagesTokenCount } from "./messages.js";

const minimal = { model: "claude-sonnet-4-5-20250929", max_tokens: 1024, messages: [{ role: "user", content: "Hello" }] };

/** The 400 message Switchyard answers a body with, or undefined when it parses. */
function refusal(body: unknown, schema: typeof messagesRequest | typeof messagesCountTokensRequest = messagesRequest): string | undefined {
  try {
    parseInput(schema, body, "body");
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

describe("messagesRequest", () => {
  it("takes a rich request as the Anthropic SDK types it", () => {
    const sent: MessageCreateParamsNonStreaming = {
      model: "claude-sonnet-4-5-20250929",
      max_tokens: 4096,
      system: [{ type: "text", text: "You are a travel agent.", cache_control: { type: "ephemeral", ttl: "1h" } }],
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "Plan my trip" },
            { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0" } },
            { type: "image", source: { type: "url", url: "https://a.example/map.png" } },
            { type: "document", source: { type: "base64", media_type: "application/pdf", data: "JVBERi0" }, title: "Itinerary", context: "Draft" },
            { type: "document", source: { type: "text", media_type: "text/plain", data: "Notes" } },
            { type: "document", source: { type: "content", content: [{ type: "text", text: "Part" }] } },
          ],
        },
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "Check the weather.", signature: "sig" },
            { type: "redacted_thinking", data: "opaque" },
            { type: "text", text: "Checking." },
            { type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Paris" } },
          ],
        },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: [{ type: "text", text: "18°C" }], is_error: false, cache_control: { type: "ephemeral" } }] },
      ],
      tools: [
        { name: "get_weather", description: "Weather", input_schema: { type: "object", properties: { city: { type: "string" } } } },
        { type: "web_search_20250305", name: "web_search", max_uses: 3 },
        { type: "bash_20250124", name: "bash" },
      ],
      tool_choice: { type: "auto", disable_parallel_tool_use: true },
      thinking: { type: "enabled", budget_tokens: 2048 },
      metadata: { user_id: "user-1" },
      stop_sequences: ["END"],
      service_tier: "standard_only",
      output_config: { effort: "high" },
      container: "container_1",
    };
    expect(refusal(sent)).toBeUndefined();
    // Sampling fields, which this SDK version no longer types.
    expect(refusal({ ...sent, temperature: 1, top_p: 0.9, top_k: 40 })).toBeUndefined();
    expect(refusal({ ...minimal, models: ["anthropic/claude-opus-4"], provider: { sort: "price" }, session_id: "s-1", trace: { trace_id: "t" }, plugins: [{ id: "web" }], user: "u", stream: true, cache_control: { type: "ephemeral" } })).toBeUndefined();
  });

  it("takes blocks it does not model, sent back for Anthropic, but refuses a known block that is malformed", () => {
    const assistant = (content: unknown[]) => ({ ...minimal, messages: [{ role: "user", content: "Hi" }, { role: "assistant", content }] });
    expect(refusal(assistant([{ type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: {} }, { type: "web_search_tool_result", tool_use_id: "srvtoolu_1", content: [] }]))).toBeUndefined();
    expect(refusal(assistant([{ type: "text" }]))).toMatch(/^Invalid body: messages\.1\.content/);
    expect(refusal(assistant([{ type: "thinking", thinking: "no signature" }]))).toMatch(/^Invalid body: messages\.1\.content/);
    expect(refusal({ ...minimal, messages: [{ role: "user", content: [{ type: "image", source: { type: "url", url: "ftp://a.example/x.png" } }] }] })).toMatch(/^Invalid body: messages\.0\.content/);
  });

  it("requires max_tokens, at least 1", () => {
    const { max_tokens: _omitted, ...body } = minimal;
    expect(refusal(body)).toBe("Invalid body: max_tokens: Invalid input: expected number, received undefined");
    expect(refusal({ ...minimal, max_tokens: 0 })).toBe("Invalid body: max_tokens: must be at least 1");
    expect(refusal({ ...minimal, messages: [] })).toBe("Invalid body: messages: must have at least 1 message");
  });

  it("refuses an unknown top-level field, naming it", () => {
    expect(refusal({ ...minimal, frequency_penalty: 0.5 })).toBe("Invalid body: unknown field frequency_penalty");
    expect(refusal({ ...minimal, response_format: { type: "json_object" }, seed: 1 })).toBe("Invalid body: unknown fields response_format, seed");
  });

  it("refuses a thinking budget under 1024 or not under max_tokens, and a temperature over 1", () => {
    expect(refusal({ ...minimal, thinking: { type: "enabled", budget_tokens: 1023 } })).toBe("Invalid body: thinking.budget_tokens: must be at least 1024");
    expect(refusal({ ...minimal, max_tokens: 1025, thinking: { type: "enabled", budget_tokens: 1024 } })).toBeUndefined();
    expect(refusal({ ...minimal, thinking: { type: "enabled", budget_tokens: 1024 } })).toBe("Invalid body: thinking.budget_tokens: must be less than max_tokens (1024)");
    expect(refusal({ ...minimal, max_tokens: 2000, thinking: { type: "enabled", budget_tokens: 4000 } })).toBe("Invalid body: thinking.budget_tokens: must be less than max_tokens (2000)");
    expect(refusal({ ...minimal, thinking: { type: "enabled" } })).toMatch(/^Invalid body: thinking\.budget_tokens: /);
    expect(refusal({ ...minimal, thinking: { type: "adaptive" } })).toBeUndefined();
    expect(refusal({ ...minimal, temperature: 1.5 })).toBe("Invalid body: temperature: Too big: expected number to be <=1");
    expect(refusal({ ...minimal, temperature: 0 })).toBeUndefined();
  });

  it("takes more stop sequences than Chat Completions does, as Anthropic does", () => {
    expect(refusal({ ...minimal, stop_sequences: ["a", "b", "c", "d", "e", "f", "g", "h"] })).toBeUndefined();
  });

  it("takes Anthropic's tool_choice shapes only", () => {
    const choice = (tool_choice: unknown) => refusal({ ...minimal, tool_choice });
    expect(choice({ type: "auto" })).toBeUndefined();
    expect(choice({ type: "auto", disable_parallel_tool_use: true })).toBeUndefined();
    expect(choice({ type: "any", disable_parallel_tool_use: false })).toBeUndefined();
    expect(choice({ type: "none" })).toBeUndefined();
    expect(choice({ type: "tool", name: "get_weather", disable_parallel_tool_use: true })).toBeUndefined();
    expect(choice({ type: "tool" })).toMatch(/^Invalid body: tool_choice\.name: /);
    expect(choice({ type: "required" })).toMatch(/^Invalid body: tool_choice\.type: /);
    expect(choice("auto")).toMatch(/^Invalid body: tool_choice: /);
  });

  it("checks custom tools' names and schemas, and takes typed tools as they are", () => {
    const tool = (t: unknown) => refusal({ ...minimal, tools: [t] });
    expect(tool({ name: "get-weather_2", input_schema: { type: "object" } })).toBeUndefined();
    expect(tool({ type: null, name: "f", input_schema: { type: "object" } })).toBeUndefined();
    expect(tool({ name: "has space", input_schema: { type: "object" } })).toMatch(/^Invalid body: tools\.0/);
    expect(tool({ type: "custom", name: "f" })).toMatch(/^Invalid body: tools\.0/);
    expect(tool({ type: "openrouter:web_fetch", parameters: { max_uses: 2 } })).toBeUndefined();
    expect(tool({ type: "text_editor_20250728", name: "str_replace_based_edit_tool", max_characters: 10_000 })).toBeUndefined();
  });

  it("bounds metadata.user_id and the service tier", () => {
    expect(refusal({ ...minimal, metadata: { user_id: "u".repeat(256) } })).toBeUndefined();
    expect(refusal({ ...minimal, metadata: { user_id: "u".repeat(257) } })).toMatch(/^Invalid body: metadata\.user_id: /);
    expect(refusal({ ...minimal, service_tier: "priority" })).toMatch(/^Invalid body: service_tier: /);
  });
});

describe("messagesCountTokensRequest", () => {
  it("takes a request without its output settings, and refuses them", () => {
    const { max_tokens: _omitted, ...body } = minimal;
    const count = (b: unknown) => refusal(b, messagesCountTokensRequest);
    expect(count({ ...body, system: "Be brief", tools: [{ name: "f", input_schema: { type: "object" } }], tool_choice: { type: "any" }, thinking: { type: "enabled", budget_tokens: 1024 } })).toBeUndefined();
    expect(count({ ...body, models: ["anthropic/claude-opus-4"], provider: { only: ["anthropic"] }, mcp_servers: [] })).toBeUndefined();
    expect(count(minimal)).toBe("Invalid body: unknown field max_tokens");
    expect(count({ ...body, stream: true })).toBe("Invalid body: unknown field stream");
    expect(count({ model: "claude-x" })).toBe("Invalid body: messages: Invalid input: expected array, received undefined");
  });
});

describe("answers", () => {
  it("describes a message and a token count", () => {
    const message = {
      id: "gen-1",
      type: "message",
      role: "assistant",
      model: "anthropic/claude-sonnet-4.5",
      content: [{ type: "text", text: "Hi" }],
      stop_reason: "end_turn",
      stop_sequence: null,
      usage: { input_tokens: 1, output_tokens: 2, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    };
    expect(messageObject.safeParse(message).success).toBe(true);
    expect(messageObject.safeParse({ ...message, stop_reason: "stop" }).success).toBe(false);
    expect(messagesTokenCount.safeParse({ input_tokens: 12 }).success).toBe(true);
    expect(messagesTokenCount.safeParse({ input_tokens: 12, estimated: true }).success).toBe(true);
    expect(messagesTokenCount.safeParse({ input_tokens: 12, estimated: false }).success).toBe(false);
  });
});
