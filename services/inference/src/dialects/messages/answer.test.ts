import { messageObject, type ServerToolCallDetail } from "@switchyard/contracts";
import { describe, expect, it } from "vitest";
import type { Accounted } from "../../accounting.js";
import type { CompletionChoice, Json } from "../../generation/parts.js";
import { nativeContentField } from "../../providers/anthropic.js";
import { contentBlocks, messageBody, messageUsage, stopReason, thinkingBlock, toolUseBlock, usageOf } from "./answer.js";

const claude = "anthropic-claude-v1";
const frame = { id: "gen-1767225600-abcDEF0123456789ghij", model: "anthropic/claude-sonnet-4.5" };

const accounted: Accounted = {
  usage: { promptTokens: 1200, completionTokens: 35, cachedTokens: 1000, cacheWriteTokens: 150, reasoningTokens: 10 },
  estimated: false,
  cost: { prompt: 1_000_000_000n, completion: 2_000_000_000n, request: 0n, total: 3_000_000_000n },
  charge: { charged: 3_000_000_000n, reported: 3_000_000_000n },
  isByok: false,
  billed: 3_000_000_000n,
};

function choice(over: Partial<CompletionChoice> = {}): CompletionChoice {
  return { index: 0, text: "Hello", reasoning: null, reasoningDetails: [], toolCalls: [], finishReason: "end_turn", fields: {}, choiceFields: {}, ...over };
}

const clock: ServerToolCallDetail = {
  type: "reasoning.server_tool_call",
  tool_name: "openrouter:datetime",
  tool_call_id: "srvtoolu_1",
  arguments: '{"timezone":"Europe/Paris"}',
  result: '{"datetime":"2026-11-26T22:00:00+01:00"}',
};

describe("stopReason", () => {
  it("passes Anthropic's own reasons and translates the others", () => {
    const table: Array<[string | null, string]> = [
      ["end_turn", "end_turn"],
      ["max_tokens", "max_tokens"],
      ["stop_sequence", "stop_sequence"],
      ["tool_use", "tool_use"],
      ["pause_turn", "pause_turn"],
      ["refusal", "refusal"],
      ["model_context_window_exceeded", "model_context_window_exceeded"],
      ["stop", "end_turn"],
      ["length", "max_tokens"],
      ["tool_calls", "tool_use"],
      ["function_call", "tool_use"],
      ["content_filter", "refusal"],
      ["SAFETY", "refusal"],
      ["MAX_TOKENS", "max_tokens"],
      ["STOP", "end_turn"],
      ["something_new", "end_turn"],
      [null, "end_turn"],
    ];
    expect(table.map(([native]) => stopReason(native))).toEqual(table.map(([, expected]) => expected));
  });
});

describe("usageOf and messageUsage", () => {
  it("counts input tokens apart from those read from and written to the cache", () => {
    expect(usageOf(accounted.usage)).toEqual({ input_tokens: 50, output_tokens: 35, cache_creation_input_tokens: 150, cache_read_input_tokens: 1000 });
    expect(usageOf({ promptTokens: 12, completionTokens: 3, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 })).toEqual({
      input_tokens: 12,
      output_tokens: 3,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    });
    // A message's usage splits the writes: hour-long ones apart from five-minute ones.
    expect(messageUsage(accounted.usage).cache_creation).toEqual({ ephemeral_5m_input_tokens: 150, ephemeral_1h_input_tokens: 0 });
    expect(messageUsage({ promptTokens: 3010, completionTokens: 20, cachedTokens: 0, cacheWriteTokens: 3000, cacheWrite1hTokens: 2000, reasoningTokens: 0 }).cache_creation).toEqual({
      ephemeral_5m_input_tokens: 1000,
      ephemeral_1h_input_tokens: 2000,
    });
    // A provider that reports more cached than prompt tokens never makes the count negative.
    expect(usageOf({ promptTokens: 5, completionTokens: 1, cachedTokens: 8, cacheWriteTokens: 0, reasoningTokens: 0 }).input_tokens).toBe(0);
  });
});

describe("blocks", () => {
  it("writes reasoning entries as thinking and encrypted ones as redacted thinking, another provider's marked as its", () => {
    expect(thinkingBlock({ type: "reasoning.text", text: "Hmm", signature: "sig", format: claude })).toEqual({ type: "thinking", thinking: "Hmm", signature: "sig" });
    expect(thinkingBlock({ type: "reasoning.text", text: "No signature" })).toEqual({ type: "thinking", thinking: "No signature", signature: "" });
    expect(thinkingBlock({ type: "reasoning.encrypted", data: "opaque", format: claude })).toEqual({ type: "redacted_thinking", data: "opaque" });
    expect(thinkingBlock({ type: "reasoning.encrypted", data: "gAAAA", id: "rs_1", format: "openai-responses-v1" })).toEqual({ type: "redacted_thinking", data: "switchyard:openai-responses-v1:rs_1:gAAAA" });
    expect(thinkingBlock({ type: "reasoning.text", text: "Gem", signature: "g-sig", format: "google-gemini-v1" })).toEqual({ type: "thinking", thinking: "Gem", signature: "switchyard:google-gemini-v1::g-sig" });
    expect(thinkingBlock({ type: "reasoning.summary", summary: "s" })).toBeUndefined();
    expect(thinkingBlock(clock)).toBeUndefined();
  });

  it("writes a tool call's arguments as its input, {} when they are not a JSON object", () => {
    expect(toolUseBlock({ id: "toolu_1", type: "function", function: { name: "f", arguments: "{bad" } })).toEqual({ type: "tool_use", id: "toolu_1", name: "f", input: {} });
  });

  it("orders a choice's blocks: thinking, server calls, text, then the client's tool calls", () => {
    const full = choice({
      text: "It is sunny.",
      reasoning: "ignored when entries exist",
      reasoningDetails: [
        { type: "reasoning.text", text: "Search first.", signature: "sig-1", format: claude, index: 0 },
        { type: "reasoning.summary", summary: "nothing", index: 1 },
        { type: "reasoning.encrypted", data: "opaque", format: claude, index: 2 },
      ],
      toolCalls: [
        { id: "toolu_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } },
        { id: "toolu_2", type: "function", function: { name: "get_time", arguments: "oops" } },
      ],
    });
    expect(contentBlocks(full, [clock])).toEqual([
      { type: "thinking", thinking: "Search first.", signature: "sig-1" },
      { type: "redacted_thinking", data: "opaque" },
      { type: "server_tool_use", id: "srvtoolu_1", name: "openrouter:datetime", input: { timezone: "Europe/Paris" } },
      { type: "server_tool_result", tool_use_id: "srvtoolu_1", content: { datetime: "2026-11-26T22:00:00+01:00" } },
      { type: "text", text: "It is sunny." },
      { type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Paris" } },
      { type: "tool_use", id: "toolu_2", name: "get_time", input: {} },
    ]);
    expect(contentBlocks(choice({ text: null, reasoning: "Plain reasoning" }))).toEqual([{ type: "thinking", thinking: "Plain reasoning", signature: "" }]);
    expect(contentBlocks(choice({ text: "" }))).toEqual([]);
    expect(contentBlocks(undefined, [clock])).toEqual([]);
  });
});

describe("messageBody", () => {
  it("answers Anthropic's message with the generation's id, the stop reason and sequence, and its usage", () => {
    const body = messageBody(frame, choice({ text: "1, 2, 3", finishReason: "stop_sequence", stopSequence: "4" }), accounted, { metadata: { openrouter_metadata: { provider: "anthropic" } } });
    expect(body).toEqual({
      id: frame.id,
      type: "message",
      role: "assistant",
      model: frame.model,
      content: [{ type: "text", text: "1, 2, 3" }],
      stop_reason: "stop_sequence",
      stop_sequence: "4",
      usage: { input_tokens: 50, output_tokens: 35, cache_creation_input_tokens: 150, cache_read_input_tokens: 1000, cache_creation: { ephemeral_5m_input_tokens: 150, ephemeral_1h_input_tokens: 0 } },
      openrouter_metadata: { provider: "anthropic" },
    });
    expect(messageObject.safeParse(body).error).toBeUndefined();
  });

  it("takes the server-tool loop's finish over the last turn's, and answers a missing choice with no content", () => {
    const tools = choice({ text: null, finishReason: "end_turn", toolCalls: [{ id: "toolu_1", type: "function", function: { name: "f", arguments: "{}" } }] });
    expect(messageBody(frame, tools, accounted, { finishReason: "tool_calls", serverCalls: [clock] })).toMatchObject({
      stop_reason: "tool_use",
      stop_sequence: null,
      content: [{ type: "server_tool_use" }, { type: "server_tool_result" }, { type: "tool_use", id: "toolu_1", name: "f", input: {} }],
    });
    expect(messageBody(frame, undefined, accounted, { finishReason: null })).toMatchObject({ content: [], stop_reason: "end_turn", stop_sequence: null });
    expect(messageBody(frame, choice({ finishReason: "length" }), accounted).stop_reason).toBe("max_tokens");
  });
});

describe("an endpoint's own answer", () => {
  const cited = { type: "char_location", cited_text: "Green.", document_index: 0, document_title: null, start_char_index: 0, end_char_index: 6, file_id: null };
  const native: Json[] = [
    { type: "thinking", thinking: "First.", signature: "sig-1" },
    { type: "text", text: "Per the document, " },
    { type: "text", text: "it is green.", citations: [cited] },
    { type: "tool_use", id: "toolu_1", name: "f", input: { a: 1 } },
    { type: "thinking", thinking: "Second.", signature: "sig-2" },
  ];

  it("answers an Anthropic endpoint's blocks as it sent them, in order with their citations", () => {
    const own = choice({ text: "Per the document, it is green.", fields: { [nativeContentField]: native }, finishReason: "tool_use" });
    expect(contentBlocks(own)).toEqual(native);
    // Response healing rewrote the words: the gateway's reading of them stands.
    expect(contentBlocks({ ...own, text: "{}" })).toEqual([{ type: "text", text: "{}" }]);
  });

  it("answers an OpenAI-compatible endpoint's refusal as text, with stop_reason refusal", () => {
    const refused = choice({ text: null, finishReason: "stop", fields: { refusal: "I can't help with that." } });
    expect(messageBody(frame, refused, accounted)).toMatchObject({ content: [{ type: "text", text: "I can't help with that." }], stop_reason: "refusal" });
    expect(messageBody(frame, choice({ fields: { refusal: null } }), accounted)).toMatchObject({ content: [{ type: "text", text: "Hello" }], stop_reason: "end_turn" });
  });
});
