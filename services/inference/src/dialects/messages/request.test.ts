import { chatCompletionRequest, messagesRequest } from "@switchyard/contracts";
import { HttpError } from "@switchyard/runtime";
import { describe, expect, it } from "vitest";
import { anthropicReasoningFormat, toChatRequest } from "./request.js";

type Json = Record<string, unknown>;

/** The request as the route parses it, then mapped. */
const mapped = (body: Json) => toChatRequest(messagesRequest.parse({ model: "claude-sonnet-4-5-20250929", max_tokens: 1024, ...body }));
const chatOf = (body: Json) => mapped(body).chat;
const messagesOf = (body: Json) => chatOf(body).messages as Json[];
const user = (content: unknown) => ({ messages: [{ role: "user", content }] });
const assistant = (content: unknown) => ({ messages: [{ role: "user", content: "Hi" }, { role: "assistant", content }] });

/** The 400 a request is refused with, or undefined when it maps. */
function refusal(body: Json): { status: number; message: string } | undefined {
  try {
    mapped(body);
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(HttpError);
    return { status: (error as HttpError).status, message: (error as Error).message };
  }
}

const ephemeral = { type: "ephemeral" } as const;
const hour = { type: "ephemeral", ttl: "1h" } as const;
const schema = { type: "object", properties: { city: { type: "string" } }, required: ["city"] };

describe("toChatRequest: prompt", () => {
  it("sends a system string, or its blocks with their cache markers, as the first message", () => {
    expect(messagesOf({ system: "Be terse.", ...user("Hi") })).toEqual([
      { role: "system", content: "Be terse." },
      { role: "user", content: "Hi" },
    ]);
    const system = [{ type: "text", text: "Rules" }, { type: "text", text: "Long context", cache_control: hour }];
    expect(messagesOf({ system, ...user("Hi") })[0]).toEqual({
      role: "system",
      content: [
        { type: "text", text: "Rules" },
        { type: "text", text: "Long context", cache_control: hour },
      ],
    });
  });

  it("maps a user's text, images and documents to chat's parts", () => {
    const content = [
      { type: "text", text: "Look", cache_control: ephemeral },
      { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0" } },
      { type: "image", source: { type: "url", url: "https://a.example/cat.jpg" }, cache_control: ephemeral },
      { type: "document", source: { type: "base64", media_type: "application/pdf", data: "JVBERi0" }, title: "report.pdf" },
      { type: "document", source: { type: "url", url: "https://a.example/paper.pdf" } },
      { type: "document", source: { type: "text", media_type: "text/plain", data: "Plain words" }, cache_control: ephemeral },
      { type: "document", source: { type: "content", content: [{ type: "text", text: "One" }, { type: "text", text: "Two" }] } },
      { type: "document", source: { type: "content", content: "Whole" } },
    ];
    const result = mapped(user(content));
    expect(result.anthropicOnly).toEqual([]);
    expect(result.chat.messages).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "Look", cache_control: ephemeral },
          { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0" } },
          { type: "image_url", image_url: { url: "https://a.example/cat.jpg" }, cache_control: ephemeral },
          { type: "file", file: { filename: "report.pdf", file_data: "data:application/pdf;base64,JVBERi0" } },
          { type: "file", file: { filename: "document.pdf", file_data: "https://a.example/paper.pdf" } },
          { type: "text", text: "Plain words", cache_control: ephemeral },
          { type: "text", text: "One\nTwo" },
          { type: "text", text: "Whole" },
        ],
      },
    ]);
  });

  it("notes file sources and content it cannot carry by where they are, each standing as its JSON", () => {
    const content = [
      { type: "text", text: "Read these" },
      { type: "image", source: { type: "file", file_id: "file_1" } },
      { type: "document", source: { type: "file", file_id: "file_2" } },
      { type: "document", source: { type: "content", content: [{ type: "text", text: "a" }, { type: "image", source: { type: "url", url: "https://a.example/x.png" } }] } },
      { type: "search_result", source: "https://a.example", title: "A", content: [] },
    ];
    const result = mapped({ messages: [{ role: "user", content: "Hi" }, { role: "assistant", content: "Yes?" }, { role: "user", content }] });
    expect(result.anthropicOnly).toEqual([
      "messages[2].content[1].source: file sources",
      "messages[2].content[2].source: file sources",
      "messages[2].content[3].source.content: blocks other than text",
      "messages[2].content[4]: blocks of type search_result in a user turn",
    ]);
    // The stand-ins are what the hold counts and the guardrails read; this chat form is never sent. A
    // document's says so, for the hold.
    const standIn = (block: Json, i: number) => (i === 0 ? { type: "text", text: "Read these" } : { type: "text", text: JSON.stringify(block), ...(block.type === "document" ? { held_as: { type: "document" } } : {}) });
    expect((result.chat.messages as Json[])[2]).toEqual({ role: "user", content: content.map(standIn) });
  });

  it("sends tool results as tool messages before the rest of the user's turn", () => {
    const content = [
      { type: "text", text: "Both done." },
      { type: "tool_result", tool_use_id: "toolu_1", content: "18°C" },
      { type: "tool_result", tool_use_id: "toolu_2", content: [{ type: "text", text: "Line 1" }, { type: "text", text: "Line 2" }] },
      { type: "tool_result", tool_use_id: "toolu_3", content: "no such city", is_error: true },
      { type: "tool_result", tool_use_id: "toolu_4", content: [{ type: "text", text: "big" }], cache_control: hour },
      { type: "tool_result", tool_use_id: "toolu_5", content: "failed", is_error: true, cache_control: ephemeral },
      { type: "tool_result", tool_use_id: "toolu_6" },
    ];
    expect(messagesOf(user(content))).toEqual([
      { role: "tool", tool_call_id: "toolu_1", content: "18°C" },
      { role: "tool", tool_call_id: "toolu_2", content: "Line 1\nLine 2" },
      { role: "tool", tool_call_id: "toolu_3", content: "Error: no such city" },
      { role: "tool", tool_call_id: "toolu_4", content: [{ type: "text", text: "big", cache_control: hour }] },
      {
        role: "tool",
        tool_call_id: "toolu_5",
        content: [
          { type: "text", text: "Error: " },
          { type: "text", text: "failed", cache_control: ephemeral },
        ],
      },
      { role: "tool", tool_call_id: "toolu_6", content: "" },
      { role: "user", content: [{ type: "text", text: "Both done." }] },
    ]);
  });

  it("notes an image in a tool result, which chat's tool messages do not carry", () => {
    const content = [{ type: "tool_result", tool_use_id: "toolu_1", content: [{ type: "text", text: "shot:" }, { type: "image", source: { type: "base64", media_type: "image/png", data: "AAAA" } }] }];
    const result = mapped(user(content));
    expect(result.anthropicOnly).toEqual(["messages[0].content[0].content[1]: blocks of type image in a tool result"]);
    expect(result.chat.messages).toEqual([{ role: "tool", tool_call_id: "toolu_1", content: `shot:\n${JSON.stringify(content[0]!.content[1])}` }]);
  });

  it("maps an assistant's text, tool calls and thinking to content, tool_calls and reasoning_details", () => {
    const content = [
      { type: "thinking", thinking: "They want weather.", signature: "sig-1" },
      { type: "redacted_thinking", data: "opaque" },
      { type: "text", text: "Checking.", cache_control: ephemeral },
      { type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Paris" } },
      { type: "tool_use", id: "toolu_2", name: "get_time", input: {} },
    ];
    const result = mapped(assistant(content));
    expect(result.replayed).toBe(false);
    expect((result.chat.messages as Json[])[1]).toEqual({
      role: "assistant",
      content: [{ type: "text", text: "Checking.", cache_control: ephemeral }],
      tool_calls: [
        { id: "toolu_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } },
        { id: "toolu_2", type: "function", function: { name: "get_time", arguments: "{}" } },
      ],
      reasoning_details: [
        { type: "reasoning.text", text: "They want weather.", signature: "sig-1", format: "anthropic-claude-v1", own_provider_only: true },
        { type: "reasoning.encrypted", data: "opaque", format: "anthropic-claude-v1", own_provider_only: true },
      ],
    });
    expect(anthropicReasoningFormat).toBe("anthropic-claude-v1");
    expect(messagesOf(assistant("Plain"))[1]).toEqual({ role: "assistant", content: "Plain" });
    expect(messagesOf(assistant([{ type: "tool_use", id: "toolu_9", name: "f", input: { a: [1] } }]))[1]).toEqual({
      role: "assistant",
      content: null,
      tool_calls: [{ id: "toolu_9", type: "function", function: { name: "f", arguments: '{"a":[1]}' } }],
    });
  });

  it("replays the gateway's own server tool calls as a call and its result, then what the turn said after", () => {
    const content = [
      { type: "text", text: "Searching." },
      { type: "server_tool_use", id: "srvtoolu_1", name: "openrouter:web_search", input: { query: "weather Paris" } },
      { type: "server_tool_result", tool_use_id: "srvtoolu_1", content: { results: [{ url: "https://a.example" }] } },
      { type: "text", text: "It is sunny." },
    ];
    const result = mapped(assistant(content));
    expect(result.replayed).toBe(true);
    expect(result.anthropicOnly).toEqual([]);
    expect((result.chat.messages as Json[]).slice(1)).toEqual([
      {
        role: "assistant",
        content: [{ type: "text", text: "Searching." }],
        tool_calls: [{ id: "srvtoolu_1", type: "function", function: { name: "web_search", arguments: '{"query":"weather Paris"}' } }],
      },
      { role: "tool", tool_call_id: "srvtoolu_1", content: '{"results":[{"url":"https://a.example"}]}' },
      { role: "assistant", content: [{ type: "text", text: "It is sunny." }] },
    ]);
    const stringResult = mapped(assistant([{ type: "server_tool_result", tool_use_id: "srvtoolu_2", content: "plain text" }]));
    expect((stringResult.chat.messages as Json[])[1]).toEqual({ role: "tool", tool_call_id: "srvtoolu_2", content: "plain text" });
  });

  it("replays web search and fetch blocks sent back as the gateway's calls, and notes others' server blocks", () => {
    const content = [
      { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: { query: "x" } },
      { type: "web_search_tool_result", tool_use_id: "srvtoolu_1", content: [{ type: "web_search_result", url: "https://a.example", title: "A", encrypted_content: "snip", page_age: null }] },
      { type: "text", text: "Found it." },
    ];
    const result = mapped(assistant(content));
    expect(result.replayed).toBe(true);
    expect(result.anthropicOnly).toEqual([]);
    expect((result.chat.messages as Json[]).slice(1)).toEqual([
      { role: "assistant", content: null, tool_calls: [{ id: "srvtoolu_1", type: "function", function: { name: "web_search", arguments: '{"query":"x"}' } }] },
      { role: "tool", tool_call_id: "srvtoolu_1", content: JSON.stringify({ results: [{ title: "A", url: "https://a.example", snippet: "snip" }] }) },
      { role: "assistant", content: [{ type: "text", text: "Found it." }] },
    ]);
    const mcp = mapped(assistant([{ type: "mcp_tool_use", id: "mcptoolu_1", name: "q", server_name: "s", input: {} }, { type: "text", text: "Done." }]));
    expect(mcp.anthropicOnly).toEqual(["messages[1].content[0]: blocks of type mcp_tool_use in an assistant turn"]);
  });
});

describe("toChatRequest: tools", () => {
  it("declares custom tools as functions, their cache markers kept", () => {
    const tools = [
      { name: "get_weather", description: "Weather of a city", input_schema: schema, cache_control: ephemeral },
      { type: "custom", name: "get_time", input_schema: { type: "object" } },
    ];
    expect(chatOf({ tools, ...user("Hi") }).tools).toEqual([
      { type: "function", function: { name: "get_weather", description: "Weather of a city", parameters: schema }, cache_control: ephemeral },
      { type: "function", function: { name: "get_time", parameters: { type: "object" } } },
    ]);
  });

  it("cuts a tool name longer than chat takes, keeping names apart, and notes it", () => {
    const long = (tail: string) => `${"n".repeat(90)}${tail}`;
    const tools = [{ name: long("a"), input_schema: schema }, { name: long("b"), input_schema: schema }, { name: "n".repeat(64), input_schema: schema }];
    const result = mapped({ tools, tool_choice: { type: "tool", name: long("b") }, ...user("Hi") });
    expect(result.anthropicOnly).toEqual(["tools[0].name: tool names longer than 64 characters", "tools[1].name: tool names longer than 64 characters"]);
    const names = (result.chat.tools as Array<{ function: { name: string } }>).map((t) => t.function.name);
    expect(names[0]).toMatch(/^n{55}_[0-9a-f]{8}$/);
    expect(names[1]).toMatch(/^n{55}_[0-9a-f]{8}$/);
    expect(names[0]).not.toBe(names[1]);
    expect(names[2]).toBe("n".repeat(64));
    expect(result.chat.tool_choice).toEqual({ type: "function", function: { name: names[1] } });
    expect(chatCompletionRequest.safeParse(result.chat).error).toBeUndefined();
  });

  it("runs Anthropic's web search and web fetch as the gateway's server tools, settings renamed", () => {
    const tools = [
      { type: "web_search_20250305", name: "web_search", max_uses: 5, allowed_domains: ["a.example"], cache_control: ephemeral },
      { type: "web_search_20250305", name: "web_search", blocked_domains: ["b.example"] },
      { type: "web_fetch_20250910", name: "web_fetch", max_uses: 2, max_content_tokens: 4000, allowed_domains: ["c.example"], blocked_domains: ["d.example"] },
      { type: "openrouter:datetime", parameters: { timezone: "UTC" } },
    ];
    const result = mapped({ tools, ...user("Hi") });
    expect(result.anthropicOnly).toEqual([]);
    expect(result.chat.tools).toEqual([
      { type: "openrouter:web_search", parameters: { max_uses: 5, allowed_domains: ["a.example"] } },
      { type: "openrouter:web_search", parameters: { excluded_domains: ["b.example"] } },
      { type: "openrouter:web_fetch", parameters: { max_uses: 2, max_content_tokens: 4000, allowed_domains: ["c.example"], blocked_domains: ["d.example"] } },
      { type: "openrouter:datetime", parameters: { timezone: "UTC" } },
    ]);
  });

  it("refuses a server tool setting the gateway cannot honour, naming it", () => {
    const location = { type: "approximate", city: "Paris" };
    expect(refusal({ tools: [{ name: "f", input_schema: schema }, { type: "web_search_20250305", name: "web_search", user_location: location }], ...user("Hi") })).toEqual({
      status: 400,
      message: "Invalid body: tools[1].user_location: not supported by the gateway's openrouter:web_search",
    });
    expect(refusal({ tools: [{ type: "web_fetch_20250910", name: "web_fetch", citations: { enabled: true } }], ...user("Hi") })).toEqual({
      status: 400,
      message: "Invalid body: tools[0].citations: not supported by the gateway's openrouter:web_fetch",
    });
    // Settings sent as null say nothing.
    expect(refusal({ tools: [{ type: "web_search_20250305", name: "web_search", user_location: null }], ...user("Hi") })).toBeUndefined();
  });

  it("notes Anthropic's other versioned tools and settings by where they are", () => {
    const tools = [
      { type: "bash_20250124", name: "bash" },
      { name: "f", input_schema: schema },
      { type: "text_editor_20250728", name: "str_replace_based_edit_tool" },
    ];
    const result = mapped({ tools, context_management: { edits: [] }, ...user("Hi") });
    expect(result.anthropicOnly).toEqual(["tools[0]: tools of type bash_20250124", "tools[2]: tools of type text_editor_20250728", "context_management: Anthropic's own setting"]);
    expect(result.chat.tools).toEqual([{ type: "function", function: { name: "f", parameters: schema } }]);
    expect(result.chat).not.toHaveProperty("context_management");
  });

  it("refuses what Anthropic runs itself and answers with blocks the gateway does not relay", () => {
    const unrelayed = "run at Anthropic, which answers with blocks of its own that the gateway does not relay";
    expect(refusal({ tools: [{ type: "code_execution_20250825", name: "code_execution" }], ...user("Hi") })?.message).toBe(`Invalid body: tools[0]: tools of type code_execution_20250825 ${unrelayed}`);
    expect(refusal({ mcp_servers: [{ type: "url", url: "https://mcp.example", name: "m" }], ...user("Hi") })?.message).toBe(`Invalid body: mcp_servers: its tools ${unrelayed}`);
    expect(refusal({ container: "container_1", ...user("Hi") })?.message).toBe(`Invalid body: container: its tools ${unrelayed}`);
  });

  it("maps tool_choice, and sends none without tools", () => {
    const tools = [{ name: "f", input_schema: schema }];
    const choice = (tool_choice: Json) => {
      const chat = chatOf({ tools, tool_choice, ...user("Hi") });
      return { tool_choice: chat.tool_choice, parallel_tool_calls: chat.parallel_tool_calls };
    };
    expect(choice({ type: "auto" })).toEqual({ tool_choice: "auto", parallel_tool_calls: undefined });
    expect(choice({ type: "auto", disable_parallel_tool_use: true })).toEqual({ tool_choice: "auto", parallel_tool_calls: false });
    expect(choice({ type: "any" })).toEqual({ tool_choice: "required", parallel_tool_calls: undefined });
    expect(choice({ type: "any", disable_parallel_tool_use: false })).toEqual({ tool_choice: "required", parallel_tool_calls: undefined });
    expect(choice({ type: "none" })).toEqual({ tool_choice: "none", parallel_tool_calls: undefined });
    expect(choice({ type: "tool", name: "f", disable_parallel_tool_use: true })).toEqual({ tool_choice: { type: "function", function: { name: "f" } }, parallel_tool_calls: false });
    expect(chatOf({ tool_choice: { type: "any" }, ...user("Hi") })).not.toHaveProperty("tool_choice");
  });
});

describe("toChatRequest: settings", () => {
  it("maps thinking and effort to reasoning", () => {
    const reasoning = (body: Json) => chatOf({ ...body, ...user("Hi") }).reasoning;
    expect(reasoning({ max_tokens: 4000, thinking: { type: "enabled", budget_tokens: 2048 } })).toEqual({ max_tokens: 2048 });
    expect(reasoning({ thinking: { type: "disabled" } })).toEqual({ enabled: false });
    expect(reasoning({ thinking: { type: "adaptive" } })).toEqual({ enabled: true });
    expect(reasoning({ thinking: { type: "adaptive" }, output_config: { effort: "low" } })).toEqual({ enabled: true, effort: "low" });
    expect(reasoning({ output_config: { effort: "medium" } })).toEqual({ enabled: true, effort: "medium" });
    expect(reasoning({ output_config: { effort: "high" } })).toEqual({ enabled: true, effort: "high" });
    expect(reasoning({ output_config: { effort: "max" } })).toEqual({ enabled: true, effort: "xhigh" });
    expect(reasoning({ output_config: {} })).toBeUndefined();
    expect(reasoning({})).toBeUndefined();
  });

  it("asks for structured output as a JSON schema response format", () => {
    const schema = { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false };
    expect(chatOf({ ...user("Hi"), output_config: { format: { type: "json_schema", schema } } }).response_format).toEqual({ type: "json_schema", json_schema: { name: "output", schema, strict: true } });
  });

  it("maps sampling, stop sequences, the end user, the service tier and the gateway's own fields", () => {
    const settings = { temperature: 0.2, top_p: 0.9, top_k: 40, stream: true, cache_control: ephemeral, session_id: "s-1", trace: { trace_id: "t-1" }, plugins: [{ id: "web" }] };
    const routing = { provider: { order: ["anthropic"] }, models: ["anthropic/claude-opus-4", "openai/gpt-4o"] };
    const chat = chatOf({ ...user("Hi"), ...settings, ...routing, stop_sequences: ["END", "STOP"], metadata: { user_id: "user-42" }, user: "ignored-when-metadata-names-one", service_tier: "standard_only" });
    expect(chat).toEqual({
      model: "anthropic/claude-sonnet-4-5-20250929",
      messages: [{ role: "user", content: "Hi" }],
      ...settings,
      ...routing,
      max_tokens: 1024,
      stop: ["END", "STOP"],
      user: "user-42",
      service_tier: "default",
    });
    expect(chatOf({ ...user("Hi"), user: "u-1", service_tier: "auto", stop_sequences: [] })).toMatchObject({ user: "u-1", service_tier: "auto" });
    expect(chatOf({ ...user("Hi"), stop_sequences: [], metadata: { user_id: null } })).not.toHaveProperty("stop");
    // More stop sequences than Chat Completions takes: the first ones in the chat form, and only Anthropic carries the request.
    const five = mapped({ ...user("Hi"), stop_sequences: ["A", "B", "C", "D", "E"] });
    expect(five.chat.stop).toEqual(["A", "B", "C", "D"]);
    expect(five.anthropicOnly).toEqual(["stop_sequences: 5 given; endpoints other than Anthropic's take at most 4"]);
    expect(chatCompletionRequest.safeParse(five.chat).error).toBeUndefined();
    expect(chatOf({ ...user("Hi"), metadata: {} })).not.toHaveProperty("user");
  });

  it("names bare models as Anthropic's and leaves slugs and presets as they are", () => {
    const model = (name: string) => chatOf({ model: name, ...user("Hi") }).model;
    expect(model("claude-sonnet-4-5-20250929")).toBe("anthropic/claude-sonnet-4-5-20250929");
    expect(model("claude-3-5-haiku-latest")).toBe("anthropic/claude-3-5-haiku-latest");
    expect(model("anthropic/claude-sonnet-4.5")).toBe("anthropic/claude-sonnet-4.5");
    expect(model("openai/gpt-4o:floor")).toBe("openai/gpt-4o:floor");
    expect(model("@preset/coder")).toBe("@preset/coder");
  });

  it("maps a rich conversation to a body chatCompletionRequest takes", () => {
    const result = mapped({
      system: [{ type: "text", text: "You are a travel agent.", cache_control: hour }],
      messages: [
        { role: "user", content: [{ type: "text", text: "Weather and map?" }, { type: "image", source: { type: "url", url: "https://a.example/map.png" } }, { type: "document", source: { type: "base64", media_type: "application/pdf", data: "JVBERi0" } }] },
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "Use the tool.", signature: "sig" },
            { type: "server_tool_use", id: "srvtoolu_1", name: "openrouter:web_search", input: { query: "Paris" } },
            { type: "server_tool_result", tool_use_id: "srvtoolu_1", content: [{ url: "https://a.example" }] },
            { type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Paris" } },
          ],
        },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "18°C", cache_control: ephemeral }, { type: "text", text: "Thanks" }] },
      ],
      tools: [{ name: "get_weather", description: "Weather", input_schema: schema }, { type: "web_search_20250305", name: "web_search", max_uses: 3 }],
      tool_choice: { type: "auto", disable_parallel_tool_use: true },
      max_tokens: 4096,
      thinking: { type: "enabled", budget_tokens: 1024 },
      metadata: { user_id: "u-1" },
      stop_sequences: ["END"],
      temperature: 1,
      top_k: 5,
      service_tier: "auto",
      stream: true,
      cache_control: ephemeral,
    });
    expect(result.anthropicOnly).toEqual([]);
    expect(result.replayed).toBe(true);
    expect(chatCompletionRequest.safeParse(result.chat).error).toBeUndefined();
    expect((result.chat.messages as Json[]).map((m) => m.role)).toEqual(["system", "user", "assistant", "tool", "assistant", "tool", "user"]);
  });
});
