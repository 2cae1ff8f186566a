import { ChatResult$inboundSchema, ChatStreamChunk$inboundSchema } from "@openrouter/sdk/models";
import { describe, expect, it } from "vitest";
import { expectBothAccept, issuePaths, wire } from "../../../tests/support/schema-checks.js";
import {
  chatCompletion,
  chatCompletionChunk,
  type ChatCompletion,
  type ChatCompletionChunk,
  type ChatUsage,
  type OpenRouterMetadata,
} from "./chat-response.js";

/** What the SDK sees: our object after a JSON round trip. */

const usage: ChatUsage = {
  prompt_tokens: 12,
  completion_tokens: 30,
  total_tokens: 42,
  prompt_tokens_details: { cached_tokens: 0 },
  completion_tokens_details: { reasoning_tokens: 8 },
  cost: 0.000123,
  cost_details: { upstream_inference_prompt_cost: 0.00002, upstream_inference_completions_cost: 0.0001, upstream_inference_cost: null },
  is_byok: false,
  server_tool_use_details: { tool_calls_requested: 0, tool_calls_executed: 0 },
};

const metadata: OpenRouterMetadata = {
  attempt: 1,
  endpoints: { total: 2, available: [{ model: "openai/gpt-4o", provider: "openai", selected: true }] },
  generation_time: 850,
  is_byok: false,
  region: null,
  requested: "openai/gpt-4o",
  strategy: "direct",
  summary: "openai/gpt-4o via openai",
};

const completion: ChatCompletion = {
  id: "gen-1767225600-abc",
  object: "chat.completion",
  created: 1_767_225_600,
  model: "openai/gpt-4o",
  system_fingerprint: "fp_abc",
  service_tier: "default",
  choices: [
    {
      index: 0,
      finish_reason: "stop",
      native_finish_reason: "stop",
      message: { role: "assistant", content: "Hello!", reasoning: "Greet back.", reasoning_details: [{ type: "reasoning.text", text: "Greet back." }] },
    },
  ],
  usage,
};

describe("chat.completion", () => {
  it("passes our schema and the SDK's, with and without routing metadata", () => {
    for (const sample of [completion, { ...completion, openrouter_metadata: metadata }, { ...completion, system_fingerprint: null }]) {
      expect(issuePaths(chatCompletion, sample)).toEqual([]);
      expect(ChatResult$inboundSchema.safeParse(wire(sample)).success).toBe(true);
    }
    const parsed = ChatResult$inboundSchema.parse(wire({ ...completion, openrouter_metadata: metadata }));
    expect(parsed.usage?.cost).toBe(usage.cost);
    expect(parsed.openrouterMetadata?.attempt).toBe(1);
  });

  it("carries tool calls", () => {
    const toolCalls: ChatCompletion = {
      ...completion,
      choices: [
        {
          index: 0,
          finish_reason: "tool_calls",
          message: { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "f", arguments: "{}" } }] },
        },
      ],
    };
    expect(issuePaths(chatCompletion, toolCalls)).toEqual([]);
    expect(ChatResult$inboundSchema.safeParse(wire(toolCalls)).success).toBe(true);
  });

  it("carries the server tool calls the gateway ran as reasoning details the SDK reads, and its web searches", () => {
    const call = { type: "reasoning.server_tool_call", tool_name: "openrouter:shell", tool_call_id: "call_1", arguments: '{"commands":["ls"]}', result: '{"container_id":"sess_a"}', index: 1 } as const;
    const withCalls: ChatCompletion = {
      ...completion,
      choices: [{ index: 0, finish_reason: "stop", message: { role: "assistant", content: "Done.", reasoning_details: [{ type: "reasoning.text", text: "Run it.", index: 0 }, call] } }],
      usage: { ...usage, server_tool_use_details: { tool_calls_requested: 1, tool_calls_executed: 1, web_search_requests: 0 } },
    };
    const parsed = expectBothAccept(chatCompletion, ChatResult$inboundSchema, withCalls) as { choices: Array<{ message: { reasoningDetails: unknown[] } }>; usage: { serverToolUseDetails: unknown } };
    expect(parsed.choices[0]!.message.reasoningDetails[1]).toEqual({ type: "reasoning.server_tool_call", toolName: "openrouter:shell", toolCallId: "call_1", arguments: call.arguments, result: call.result, index: 1 });
    expect(parsed.usage.serverToolUseDetails).toEqual({ toolCallsRequested: 1, toolCallsExecuted: 1, webSearchRequests: 0 });
    const chunk = { id: completion.id, object: "chat.completion.chunk", created: completion.created, model: completion.model, choices: [{ index: 0, delta: { reasoning_details: [call] }, finish_reason: null }] };
    expectBothAccept(chatCompletionChunk, ChatStreamChunk$inboundSchema, chunk);
  });

  it.each([
    ["system_fingerprint", { system_fingerprint: undefined }],
    ["service_tier", { service_tier: undefined }],
    ["object", { object: "chat.completion.chunk" }],
    ["usage", { usage: undefined }],
    ["usage.cost", { usage: { ...usage, cost: undefined } }],
    ["usage.is_byok", { usage: { ...usage, is_byok: undefined } }],
    ["usage.prompt_tokens_details.cached_tokens", { usage: { ...usage, prompt_tokens_details: {} } }],
    ["usage.completion_tokens_details.reasoning_tokens", { usage: { ...usage, completion_tokens_details: {} } }],
    // The SDK rejects null here, whatever the spec's table says.
    ["usage.cost_details.upstream_inference_prompt_cost", { usage: { ...usage, cost_details: { ...usage.cost_details, upstream_inference_prompt_cost: null } } }],
    ["usage.server_tool_use_details.tool_calls_executed", { usage: { ...usage, server_tool_use_details: { tool_calls_requested: 1 } } }],
    ["openrouter_metadata.endpoints", { openrouter_metadata: { ...metadata, endpoints: undefined } }],
    ["choices.0.finish_reason", { choices: [{ ...completion.choices[0], finish_reason: "done" }] }],
  ])("rejects a bad %s", (field, patch) => {
    expect(issuePaths(chatCompletion, { ...completion, ...patch })).toContain(field);
  });
});

describe("chat.completion.chunk", () => {
  const base = { id: completion.id, object: "chat.completion.chunk", created: completion.created, model: completion.model } as const;
  const frames: ChatCompletionChunk[] = [
    { ...base, system_fingerprint: "fp_abc", choices: [{ index: 0, delta: { role: "assistant", content: "Hel" }, finish_reason: null }] },
    { ...base, choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: "c1", type: "function", function: { name: "f", arguments: "" } }] }, finish_reason: null }] },
    { ...base, choices: [{ index: 0, delta: { content: "lo" }, finish_reason: "stop", native_finish_reason: "stop" }] },
    { ...base, choices: [{ index: 0, delta: {}, finish_reason: null }], usage, openrouter_metadata: metadata },
    {
      ...base,
      choices: [{ index: 0, delta: { content: "" }, finish_reason: "error" }],
      error: { code: 502, message: "Provider returned error", metadata: { error_type: "provider_unavailable" } },
    },
  ];

  it("passes our schema and the SDK's for content, tool call, finish, usage and error frames", () => {
    for (const frame of frames) {
      expect(issuePaths(chatCompletionChunk, frame)).toEqual([]);
      expect(ChatStreamChunk$inboundSchema.safeParse(wire(frame)).success).toBe(true);
    }
  });

  it("rejects the nulls the SDK rejects in chunks", () => {
    const last = frames[3];
    expect(issuePaths(chatCompletionChunk, { ...last, usage: null })).toEqual(["usage"]);
    expect(issuePaths(chatCompletionChunk, { ...last, system_fingerprint: null })).toEqual(["system_fingerprint"]);
    expect(ChatStreamChunk$inboundSchema.safeParse({ ...wire(last) as object, usage: null }).success).toBe(false);
  });

  it("requires a tool call delta's index", () => {
    const frame = { ...base, choices: [{ index: 0, delta: { tool_calls: [{ id: "c1" }] }, finish_reason: null }] };
    expect(issuePaths(chatCompletionChunk, frame)).toEqual(["choices.0.delta.tool_calls.0.index"]);
  });
});
