import { chatCompletionRequest, responsesRequest, type ResponsesRequestInput } from "@switchyard/contracts";
import { describe, expect, it } from "vitest";
import { checkToolChoice, toChatRequest } from "./request.js";

/** The request as the route parses it, mapped, and checked to be a chat request the gateway takes. */
function mapped(body: Partial<ResponsesRequestInput>) {
  const result = toChatRequest(responsesRequest.parse({ model: "openai/gpt-4o", ...body }));
  const parsed = chatCompletionRequest.safeParse(result.chat);
  expect(parsed.error).toBeUndefined();
  return result;
}

const messagesOf = (body: Partial<ResponsesRequestInput>) => mapped(body).chat.messages as Array<Record<string, unknown>>;

describe("toChatRequest", () => {
  it("sends instructions first, as a system message, and a string input as the user's", () => {
    expect(messagesOf({ instructions: "Be brief", input: "Hello" })).toEqual([
      { role: "system", content: "Be brief" },
      { role: "user", content: "Hello" },
    ]);
  });

  it("takes developer messages as system ones and easy messages without a type", () => {
    expect(messagesOf({ input: [{ role: "developer", content: "Rules" }, { role: "user", content: [{ type: "input_text", text: "Hi" }] }] })).toEqual([
      { role: "system", content: "Rules" },
      { role: "user", content: [{ type: "text", text: "Hi" }] },
    ]);
  });

  it("maps images, files and audio to chat's parts", () => {
    const content = [
      { type: "input_image", image_url: "https://a.example/x.png", detail: "low" },
      { type: "input_image", file_id: "file_1", detail: "auto" },
      { type: "input_file", file_data: "data:application/pdf;base64,AAAA", filename: "a.pdf" },
      { type: "input_file", file_url: "https://a.example/b.pdf" },
      { type: "input_audio", input_audio: { data: "AAAA", format: "wav" } },
    ] as const;
    expect(messagesOf({ input: [{ type: "message", role: "user", content: [...content] }] })).toEqual([
      {
        role: "user",
        content: [
          { type: "image_url", image_url: { url: "https://a.example/x.png", detail: "low" } },
          { type: "file", file: { file_id: "file_1" }, image_detail: "auto" },
          { type: "file", file: { filename: "a.pdf", file_data: "data:application/pdf;base64,AAAA" } },
          { type: "file", file: { file_data: "https://a.example/b.pdf" } },
          { type: "input_audio", input_audio: { data: "AAAA", format: "wav" } },
        ],
      },
    ]);
  });

  it("joins an answer's message and the function calls after it into one assistant turn, and results into tool messages", () => {
    const input = [
      { role: "user", content: "Weather in Paris and Rome?" },
      { type: "message", role: "assistant", id: "msg_1", status: "completed", content: [{ type: "output_text", text: "Looking.", annotations: [] }] },
      { type: "function_call", call_id: "call_1", name: "weather", arguments: '{"city":"Paris"}' },
      { type: "function_call", call_id: "call_2", name: "weather", arguments: '{"city":"Rome"}' },
      { type: "function_call_output", call_id: "call_1", output: "sunny" },
      { type: "function_call_output", call_id: "call_2", output: [{ type: "input_text", text: "rain" }] },
    ] as const;
    expect(messagesOf({ input: [...input] }).slice(1)).toEqual([
      {
        role: "assistant",
        content: "Looking.",
        tool_calls: [
          { id: "call_1", type: "function", function: { name: "weather", arguments: '{"city":"Paris"}' } },
          { id: "call_2", type: "function", function: { name: "weather", arguments: '{"city":"Rome"}' } },
        ],
      },
      { role: "tool", tool_call_id: "call_1", content: "sunny" },
      { role: "tool", tool_call_id: "call_2", content: [{ type: "text", text: "rain" }] },
    ]);
  });

  it("puts reasoning items on the assistant turn they precede, as reasoning_details", () => {
    const input = [
      { role: "user", content: "Think" },
      { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "First" }], encrypted_content: "blob", format: "openai-responses-v1" },
      { type: "function_call", call_id: "call_1", name: "f", arguments: "{}" },
    ] as const;
    expect(messagesOf({ input: [...input] })[1]).toEqual({
      role: "assistant",
      content: null,
      tool_calls: [{ id: "call_1", type: "function", function: { name: "f", arguments: "{}" } }],
      reasoning_details: [
        { type: "reasoning.summary", summary: "First", id: "rs_1", format: "openai-responses-v1", own_provider_only: true },
        { type: "reasoning.encrypted", data: "blob", id: "rs_1", format: "openai-responses-v1", own_provider_only: true },
      ],
    });
  });

  it("sends a signed thinking block back whole, and keeps reasoning with no turn after it on the last one", () => {
    const input = [
      { role: "user", content: "Hi" },
      { type: "message", role: "assistant", content: "Hello" },
      { type: "reasoning", summary: [], content: [{ type: "reasoning_text", text: "hmm" }], signature: "sig", format: "anthropic-claude-v1" },
      { role: "user", content: "Again" },
    ] as const;
    expect(messagesOf({ input: [...input] })).toEqual([
      { role: "user", content: "Hi" },
      { role: "assistant", content: "Hello", reasoning_details: [{ type: "reasoning.text", text: "hmm", signature: "sig", format: "anthropic-claude-v1", own_provider_only: true }] },
      { role: "user", content: "Again" },
    ]);
  });

  it("reads what a provider needs from encrypted_content alone, as Codex sends reasoning back", () => {
    const input = [
      { role: "user", content: "Hi" },
      { type: "reasoning", summary: [{ type: "summary_text", text: "Plan" }], encrypted_content: "gAAAA-openai" },
      { type: "reasoning", summary: [], content: [{ type: "reasoning_text", text: "hmm" }], encrypted_content: "switchyard:signature:anthropic-claude-v1::sig" },
      { type: "reasoning", summary: [], encrypted_content: "switchyard:encrypted:anthropic-claude-v1::redacted" },
      { type: "reasoning", summary: [], encrypted_content: "switchyard:encrypted:google-gemini-v1:call_1:CiIB" },
      { type: "function_call", call_id: "call_1", name: "f", arguments: "{}" },
    ] as const;
    expect(messagesOf({ input: [...input] })[1]!.reasoning_details).toEqual([
      { type: "reasoning.summary", summary: "Plan", format: "openai-responses-v1", own_provider_only: true },
      { type: "reasoning.encrypted", data: "gAAAA-openai", format: "openai-responses-v1", own_provider_only: true },
      { type: "reasoning.text", text: "hmm", signature: "sig", format: "anthropic-claude-v1", own_provider_only: true },
      { type: "reasoning.encrypted", data: "redacted", format: "anthropic-claude-v1", own_provider_only: true },
      { type: "reasoning.encrypted", data: "CiIB", id: "call_1", format: "google-gemini-v1", own_provider_only: true },
    ]);
  });

  it("replays a server tool call an answer showed as the entry chat replays", () => {
    const input = [
      { role: "user", content: "What time is it?" },
      { type: "openrouter:datetime", id: "dt_1", status: "completed", datetime: "2026-01-01T10:00:00+00:00", timezone: "UTC" },
      { type: "message", role: "assistant", content: [{ type: "output_text", text: "10 o'clock" }] },
    ] as const;
    expect(messagesOf({ input: [...input] })[1]).toEqual({
      role: "assistant",
      content: "10 o'clock",
      reasoning_details: [
        {
          type: "reasoning.server_tool_call",
          tool_name: "openrouter:datetime",
          tool_call_id: "dt_1",
          arguments: '{"timezone":"UTC"}',
          result: '{"datetime":"2026-01-01T10:00:00+00:00","timezone":"UTC"}',
        },
      ],
    });
  });

  it("maps the settings to chat's and copies the shared ones", () => {
    const { chat, summary } = mapped({
      input: "Hi",
      models: ["anthropic/claude-sonnet-4"],
      max_output_tokens: 500,
      temperature: 0.2,
      top_p: 0.9,
      reasoning: { effort: "high", summary: "detailed" },
      text: { format: { type: "json_schema", name: "answer", schema: { type: "object" }, strict: true }, verbosity: "low" },
      tools: [{ type: "function", name: "lookup", description: "Finds", parameters: { type: "object" } }, { type: "openrouter:datetime" }],
      tool_choice: { type: "function", name: "lookup" },
      parallel_tool_calls: false,
      metadata: { team: "a" },
      safety_identifier: "end-user-1",
      provider: { sort: "price" },
      plugins: [{ id: "web" }],
      session_id: "s1",
      max_tool_calls: 3,
      prompt_cache_key: "k",
      service_tier: "auto",
      stream: true,
      store: false,
      include: ["reasoning.encrypted_content"],
    });
    expect(summary).toBe("detailed");
    expect(chat).toEqual({
      messages: [{ role: "user", content: "Hi" }],
      model: "openai/gpt-4o",
      models: ["anthropic/claude-sonnet-4"],
      max_tokens: 500,
      temperature: 0.2,
      top_p: 0.9,
      reasoning: { effort: "high", summary: "detailed" },
      response_format: { type: "json_schema", json_schema: { name: "answer", schema: { type: "object" }, strict: true } },
      verbosity: "low",
      tools: [{ type: "function", function: { name: "lookup", description: "Finds", parameters: { type: "object" } } }, { type: "openrouter:datetime" }],
      tool_choice: { type: "function", function: { name: "lookup" } },
      parallel_tool_calls: false,
      metadata: { team: "a" },
      user: "end-user-1",
      safety_identifier: "end-user-1",
      provider: { sort: "price" },
      plugins: [{ id: "web" }],
      session_id: "s1",
      max_tool_calls: 3,
      prompt_cache_key: "k",
      service_tier: "auto",
      stream: true,
      include: ["reasoning.encrypted_content"],
    });
  });

  it("passes a server tool choice and the simple formats through", () => {
    const { chat, summary } = mapped({ input: "Hi", tools: [{ type: "openrouter:web_search" }], tool_choice: { type: "openrouter:web_search" }, text: { format: { type: "json_object" } } });
    expect(chat).toMatchObject({ tool_choice: { type: "openrouter:web_search" }, response_format: { type: "json_object" } });
    expect(summary).toBeNull();
  });
  it("refuses a tool choice the request's tools cannot meet, naming tool_choice", () => {
    const lookup = { type: "function" as const, name: "lookup" };
    const refusal = (body: Partial<ResponsesRequestInput>) => {
      try {
        checkToolChoice(chatCompletionRequest.parse(mapped({ input: "Hi", ...body }).chat));
        return undefined;
      } catch (error) {
        return (error as Error).message;
      }
    };
    expect(refusal({ tool_choice: "required" })).toBe('Invalid body: tool_choice: is "required" but the request declares no tools');
    expect(refusal({ tools: [lookup], tool_choice: { type: "function", name: "other" } })).toBe(
      "Invalid body: tool_choice: names the function other, which is not among the request's tools",
    );
    expect(refusal({ tools: [{ type: "openrouter:datetime" }], tool_choice: "required" })).toBeUndefined();
    expect(refusal({ tools: [lookup], tool_choice: { type: "function", name: "lookup" } })).toBeUndefined();
    expect(refusal({ tool_choice: "none" })).toBeUndefined();
  });
});

describe("toChatRequest: namespace tools", () => {
  const fn = (name: string) => ({ type: "function" as const, name, parameters: { type: "object" } });
  const namesOf = (body: Partial<ResponsesRequestInput>) => (mapped(body).chat.tools as Array<{ function: { name: string } }>).map((t) => t.function.name);

  it("sends each function as <namespace>__<name>, hashed when another tool has that name", () => {
    const names = namesOf({ input: "Hi", tools: [fn("crm__find"), { type: "namespace", name: "crm", description: "CRM", tools: [fn("find"), fn("save")] }] });
    expect(names[0]).toBe("crm__find");
    expect(names[1]).toMatch(/^crm__find_[0-9a-f]{8}$/);
    expect(names[2]).toBe("crm__save");
  });

  it("sends a function call sent back with its namespace under the name its function is sent as", () => {
    const tools = [fn("crm__find"), { type: "namespace" as const, name: "crm", description: "CRM", tools: [fn("find")] }];
    const call = { type: "function_call" as const, call_id: "c1", name: "find", namespace: "crm", arguments: "{}" };
    const { chat } = mapped({ input: [call], tools });
    const sentAs = (chat.tools as Array<{ function: { name: string } }>)[1]!.function.name;
    expect(chat.messages).toEqual([{ role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: sentAs, arguments: "{}" } }] }]);
  });
});
