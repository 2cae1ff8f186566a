import { Stream } from "@anthropic-ai/sdk/core/streaming";
import { MessageStream } from "@anthropic-ai/sdk/lib/MessageStream";
import type { Message, MessageStreamEvent } from "@anthropic-ai/sdk/resources/messages/messages";
import { messageObject, type ServerToolCallDetail } from "@switchyard/contracts";
import { describe, expect, it } from "vitest";
import type { Accounted } from "../../accounting.js";
import type { CompletionChoice, StreamPart } from "../../generation/parts.js";
import { nativeEventField } from "../../providers/anthropic.js";
import { messageBody, usageOf } from "./answer.js";
import { MessagesEvents } from "./events.js";

type Json = Record<string, unknown>;

const frame = { id: "gen-1767225600-abcDEF0123456789ghij", model: "anthropic/claude-sonnet-4.5" };

const accounted: Accounted = {
  usage: { promptTokens: 100, completionTokens: 20, cachedTokens: 30, cacheWriteTokens: 10, reasoningTokens: 0 },
  estimated: false,
  cost: { prompt: 1_000_000_000n, completion: 2_000_000_000n, request: 0n, total: 3_000_000_000n },
  charge: { charged: 3_000_000_000n, reported: 3_000_000_000n },
  isByok: false,
  billed: 3_000_000_000n,
};
const usage = { input_tokens: 60, output_tokens: 20, cache_creation_input_tokens: 10, cache_read_input_tokens: 30 };
const noUsage = { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };

function renderer() {
  const events: Json[] = [];
  const stream = new MessagesEvents((event) => events.push(event), frame);
  return { stream, events };
}

const text = (value: string): StreamPart => ({ type: "text", choice: 0, text: value });
const reasoning = (value: string): StreamPart => ({ type: "reasoning", choice: 0, text: value });
const detail = (value: Json & { type: string }): StreamPart => ({ type: "reasoning-detail", choice: 0, detail: value });
const callStart = (index: number, id: string, name: string): StreamPart => ({ type: "tool-call-start", choice: 0, index, id, name });
const callDelta = (index: number, args: string): StreamPart => ({ type: "tool-call-delta", choice: 0, index, arguments: args });
const callEnd = (index: number): StreamPart => ({ type: "tool-call-end", choice: 0, index });
const claude = "anthropic-claude-v1";

/**
 * Every block is started at the next index from 0, filled and stopped before the next one starts and before
 * `message_delta`; returns the event types in order.
 */
function checked(events: Json[]): string[] {
  let next = 0;
  let open: number | undefined;
  for (const event of events) {
    if (event.type === "content_block_start") {
      expect(open).toBeUndefined();
      expect(event.index).toBe(next);
      open = next++;
    } else if (event.type === "content_block_delta") {
      expect(event.index).toBe(open);
    } else if (event.type === "content_block_stop") {
      expect(event.index).toBe(open);
      open = undefined;
    } else if (event.type === "message_delta" || event.type === "error") {
      expect(open).toBeUndefined();
    }
  }
  return events.map((e) => String(e.type));
}

/** The events as the SSE an Anthropic SDK client reads, accumulated by the SDK's own MessageStream. */
async function sdkMessage(events: Json[]): Promise<Message> {
  const sse = events.map((e) => `event: ${String(e.type)}\ndata: ${JSON.stringify(e)}\n\n`).join("");
  const stream = Stream.fromSSEResponse<MessageStreamEvent>(new Response(sse), new AbortController());
  const { parsed_output: _parsed, ...message } = await MessageStream.fromReadableStream(stream.toReadableStream()).finalMessage();
  return message as Message;
}

const opened = ["message_start", "ping"];
const closed = ["message_delta", "message_stop"];
const block = (...deltas: number[]) => ["content_block_start", ...deltas.map(() => "content_block_delta"), "content_block_stop"];

describe("MessagesEvents", () => {
  it("writes a text answer as Anthropic's sequence, which the SDK accumulates into the buffered message", async () => {
    const { stream, events } = renderer();
    stream.push([{ type: "passthrough", choice: 0, fields: { role: "assistant" } }, text(""), text("Hel")]);
    stream.push([text("lo"), { type: "finish", choice: 0, reason: "end_turn" }]);
    stream.push([{ type: "usage", usage: accounted.usage }]);
    stream.finish(accounted, "end_turn");
    expect(events).toEqual([
      {
        type: "message_start",
        message: { id: frame.id, type: "message", role: "assistant", model: frame.model, content: [], stop_reason: null, stop_sequence: null, usage: { ...noUsage, cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 } } },
      },
      { type: "ping" },
      { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
      { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Hel" } },
      { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "lo" } },
      { type: "content_block_stop", index: 0 },
      { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage },
      { type: "message_stop" },
    ]);
    const choice: CompletionChoice = { index: 0, text: "Hello", reasoning: null, reasoningDetails: [], toolCalls: [], finishReason: "end_turn", fields: {}, choiceFields: {} };
    const buffered = messageBody(frame, choice, accounted);
    expect(messageObject.safeParse(buffered).error).toBeUndefined();
    // The split of cache writes travels in message_start only, and this provider counted no prompt there.
    expect(await sdkMessage(events)).toEqual({ ...buffered, usage: { ...usageOf(accounted.usage), cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 } } });
  });

  it("writes thinking with its signature, from reasoning parts and the provider's entries", async () => {
    const { stream, events } = renderer();
    stream.push([reasoning("Let"), detail({ type: "reasoning.text", text: "Let", format: claude, index: 0 })]);
    stream.push([reasoning(" me"), detail({ type: "reasoning.text", text: " me", format: claude, index: 0 })]);
    stream.push([detail({ type: "reasoning.text", signature: "sig-1", format: claude, index: 0 })]);
    stream.push([text("Hi")]);
    stream.finish(accounted, "stop");
    expect(checked(events)).toEqual([...opened, ...block(1, 2, 3), ...block(1), ...closed]);
    expect(events.slice(2, 7)).toEqual([
      { type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "", signature: "" } },
      { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "Let" } },
      { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: " me" } },
      { type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature: "sig-1" } },
      { type: "content_block_stop", index: 0 },
    ]);
    expect((await sdkMessage(events)).content).toEqual([
      { type: "thinking", thinking: "Let me", signature: "sig-1" },
      { type: "text", text: "Hi" },
    ]);
  });

  it("starts the message with the prompt's tokens where the provider counts them as its answer starts", () => {
    const { stream, events } = renderer();
    expect(events).toEqual([]);
    const promptUsage = { promptTokens: 2060, completionTokens: 0, cachedTokens: 2048, cacheWriteTokens: 0, reasoningTokens: 0 };
    stream.push([{ type: "metadata", promptUsage }, text("Hi")]);
    expect(events[0]).toMatchObject({ type: "message_start", message: { usage: { input_tokens: 12, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 2048 } } });
  });

  it("ends a thinking block with its signature: the next thinking is a block of its own", async () => {
    const { stream, events } = renderer();
    stream.push([reasoning("A"), detail({ type: "reasoning.text", text: "A", format: claude, index: 0 })]);
    stream.push([detail({ type: "reasoning.text", signature: "sig-a", format: claude, index: 0 })]);
    stream.push([reasoning("B"), detail({ type: "reasoning.text", text: "B", format: claude, index: 1 })]);
    stream.push([detail({ type: "reasoning.text", signature: "sig-", format: claude, index: 1 }), detail({ type: "reasoning.text", signature: "b", format: claude, index: 1 })]);
    stream.push([detail({ type: "reasoning.text", text: "Gem", signature: "g-sig", id: "call_1", format: "google-gemini-v1", index: 2 })]);
    stream.finish(accounted, "stop");
    expect(checked(events)).toEqual([...opened, ...block(1, 2), ...block(1, 2), ...block(1, 2), ...closed]);
    expect((await sdkMessage(events)).content).toEqual([
      { type: "thinking", thinking: "A", signature: "sig-a" },
      { type: "thinking", thinking: "B", signature: "sig-b" },
      // Gemini's signature, marked as Gemini's (with the call it belongs to) so that it goes back to Gemini only.
      { type: "thinking", thinking: "Gem", signature: "switchyard:google-gemini-v1:call_1:g-sig" },
    ]);
  });

  it("writes a provider's entries alone as thinking, and redacted thinking whole", async () => {
    const { stream, events } = renderer();
    stream.push([detail({ type: "reasoning.text", text: "Hmm", signature: "sig-2", format: claude })]);
    stream.push([detail({ type: "reasoning.encrypted", data: "opaque", format: claude, index: 1 })]);
    // Another provider's encrypted reasoning is marked as its own; summaries have no place in Anthropic's message.
    stream.push([detail({ type: "reasoning.encrypted", data: "gAAAA", format: "openai-responses-v1" }), detail({ type: "reasoning.summary", summary: "s" })]);
    stream.push([text("Done")]);
    stream.finish(accounted, "end_turn");
    expect(checked(events)).toEqual([...opened, ...block(1, 2), "content_block_start", "content_block_stop", "content_block_start", "content_block_stop", ...block(1), ...closed]);
    expect(events[6]).toEqual({ type: "content_block_start", index: 1, content_block: { type: "redacted_thinking", data: "opaque" } });
    expect((await sdkMessage(events)).content).toEqual([
      { type: "thinking", thinking: "Hmm", signature: "sig-2" },
      { type: "redacted_thinking", data: "opaque" },
      { type: "redacted_thinking", data: "switchyard:openai-responses-v1::gAAAA" },
      { type: "text", text: "Done" },
    ]);
  });

  it("writes tool calls with their argument deltas, closing the text before them", async () => {
    const { stream, events } = renderer();
    stream.push([text("Checking.")]);
    stream.push([callStart(0, "toolu_1", "get_weather"), callDelta(0, '{"city":')]);
    stream.push([callDelta(0, '"Paris"}'), callEnd(0)]);
    stream.push([callStart(1, "toolu_2", "get_time"), callDelta(1, ""), callEnd(1), { type: "finish", choice: 0, reason: "tool_use" }]);
    stream.finish(accounted, "tool_use");
    expect(checked(events)).toEqual([...opened, ...block(1), ...block(1, 2), ...block(), ...closed]);
    expect(events[5]).toEqual({ type: "content_block_start", index: 1, content_block: { type: "tool_use", id: "toolu_1", name: "get_weather", input: {} } });
    expect(events[6]).toEqual({ type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: '{"city":' } });
    const message = await sdkMessage(events);
    expect(message.stop_reason).toBe("tool_use");
    expect(message.content).toEqual([
      { type: "text", text: "Checking." },
      { type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Paris" } },
      { type: "tool_use", id: "toolu_2", name: "get_time", input: {} },
    ]);
  });

  it("numbers interleaved text and tool calls in order, a call left open closed by what follows", async () => {
    const { stream, events } = renderer();
    stream.push([text("A")]);
    stream.push([callStart(0, "call_1", "lookup"), callDelta(0, '{"q":1}')]);
    stream.push([text("B")]);
    stream.push([callStart(1, "call_2", "lookup"), callDelta(1, '{"q":2}')]);
    stream.finish(accounted, "tool_calls");
    expect(checked(events)).toEqual([...opened, ...block(1), ...block(1), ...block(1), ...block(1), ...closed]);
    expect(events.filter((e) => e.type === "content_block_start").map((e) => e.index)).toEqual([0, 1, 2, 3]);
    const message = await sdkMessage(events);
    expect(message.content).toEqual([
      { type: "text", text: "A" },
      { type: "tool_use", id: "call_1", name: "lookup", input: { q: 1 } },
      { type: "text", text: "B" },
      { type: "tool_use", id: "call_2", name: "lookup", input: { q: 2 } },
    ]);
    expect(message.stop_reason).toBe("tool_use");
  });

  it("says which stop sequence ended the message", async () => {
    const { stream, events } = renderer();
    stream.push([text("1, 2, 3")]);
    stream.push([{ type: "finish", choice: 0, reason: "stop_sequence", stopSequence: "4" }]);
    stream.finish(accounted, "stop_sequence");
    expect(events.at(-2)).toEqual({ type: "message_delta", delta: { stop_reason: "stop_sequence", stop_sequence: "4" }, usage });
    expect(await sdkMessage(events)).toMatchObject({ stop_reason: "stop_sequence", stop_sequence: "4", usage });
  });

  it("writes the server tool calls the gateway ran as whole blocks between the turns", async () => {
    const { stream, events } = renderer();
    const call: ServerToolCallDetail = {
      type: "reasoning.server_tool_call",
      tool_name: "openrouter:web_search",
      tool_call_id: "srvtoolu_1",
      arguments: '{"query":"weather Paris"}',
      result: '{"results":[{"title":"Paris","url":"https://a.example"}]}',
    };
    stream.push([text("Searching.")]);
    stream.serverCalls([call, { ...call, tool_call_id: null, id: null, index: 1, arguments: "", result: "not json" }]);
    stream.push([text("Sunny.")]);
    stream.finish(accounted, "end_turn", { openrouter_metadata: { provider: "anthropic" } });
    expect(checked(events)).toEqual([...opened, ...block(1), ...block(), ...block(), ...block(), ...block(), ...block(1), ...closed]);
    expect(events.at(-2)).toEqual({ type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage, openrouter_metadata: { provider: "anthropic" } });
    expect((await sdkMessage(events)).content).toEqual([
      { type: "text", text: "Searching." },
      { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: { query: "weather Paris" } },
      { type: "web_search_tool_result", tool_use_id: "srvtoolu_1", content: [{ type: "web_search_result", title: "Paris", url: "https://a.example", encrypted_content: "", page_age: null }] },
      { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: {} },
      { type: "web_search_tool_result", tool_use_id: "srvtoolu_1", content: { type: "web_search_tool_result_error", error_code: "unavailable" } },
      { type: "text", text: "Sunny." },
    ]);
  });

  it("fails in-band with Anthropic's error event, which the SDK raises as the API's error", async () => {
    const { stream, events } = renderer();
    stream.push([text("Partial")]);
    stream.fail(429, "Rate limit exceeded");
    expect(checked(events)).toEqual([...opened, ...block(1), "error"]);
    expect(events.at(-1)).toEqual({ type: "error", error: { type: "rate_limit_error", message: "Rate limit exceeded" } });
    await expect(sdkMessage(events)).rejects.toMatchObject({ type: "rate_limit_error", error: { type: "error", error: { type: "rate_limit_error", message: "Rate limit exceeded" } } });
    const types = (status: number) => {
      const { stream: s, events: e } = renderer();
      s.fail(status, "x");
      return (e.at(-1)!.error as Json).type;
    };
    expect([400, 401, 402, 403, 404, 413, 500, 502, 503, 524, 529].map(types)).toEqual([
      "invalid_request_error",
      "authentication_error",
      "billing_error",
      "permission_error",
      "not_found_error",
      "request_too_large",
      "api_error",
      "api_error",
      "overloaded_error",
      "timeout_error",
      "overloaded_error",
    ]);
  });

  it("finishes with Anthropic's stop reason, from a native reason or the gateway's", () => {
    const finished = (reason: string | null) => {
      const { stream, events } = renderer();
      stream.finish(accounted, reason);
      expect(checked(events)).toEqual([...opened, ...closed]);
      return (events[2]!.delta as Json).stop_reason;
    };
    const table: Array<[string | null, string]> = [
      ["end_turn", "end_turn"],
      ["max_tokens", "max_tokens"],
      ["tool_use", "tool_use"],
      ["stop_sequence", "stop_sequence"],
      ["refusal", "refusal"],
      ["pause_turn", "pause_turn"],
      ["stop", "end_turn"],
      ["length", "max_tokens"],
      ["tool_calls", "tool_use"],
      ["content_filter", "refusal"],
      ["SAFETY", "refusal"],
      [null, "end_turn"],
    ];
    expect(table.map(([reason]) => finished(reason))).toEqual(table.map(([, expected]) => expected));
  });

  it("relays an Anthropic endpoint's own content events as they came, and renders its parts no more", async () => {
    const { stream, events } = renderer();
    const own = (event: Json): StreamPart => ({ type: "passthrough", choice: 0, fields: { [nativeEventField]: event as never } });
    const citation = { type: "char_location", cited_text: "Green.", document_index: 0, document_title: null, start_char_index: 0, end_char_index: 6, file_id: null };
    stream.push([{ type: "passthrough", choice: 0, fields: { role: "assistant" } }, text("")]);
    stream.push([own({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } })]);
    stream.push([own({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Per the document, " } }), text("Per the document, ")]);
    stream.push([own({ type: "content_block_stop", index: 0 })]);
    stream.push([own({ type: "content_block_start", index: 1, content_block: { type: "text", text: "", citations: [] } })]);
    stream.push([own({ type: "content_block_delta", index: 1, delta: { type: "citations_delta", citation } })]);
    stream.push([own({ type: "content_block_delta", index: 1, delta: { type: "text_delta", text: "it is green." } }), text("it is green.")]);
    stream.push([own({ type: "content_block_stop", index: 1 })]);
    stream.push([own({ type: "content_block_start", index: 2, content_block: { type: "tool_use", id: "toolu_1", name: "f", input: {} } }), callStart(0, "toolu_1", "f")]);
    stream.push([own({ type: "content_block_delta", index: 2, delta: { type: "input_json_delta", partial_json: '{"a":1}' } }), callDelta(0, '{"a":1}')]);
    stream.push([own({ type: "content_block_stop", index: 2 }), callEnd(0), { type: "finish", choice: 0, reason: "tool_use" }]);
    stream.finish(accounted, "tool_use");
    expect(checked(events)).toEqual([...opened, ...block(1), ...block(1, 2), ...block(1), ...closed]);
    expect((await sdkMessage(events)).content).toEqual([
      { type: "text", text: "Per the document, " },
      { type: "text", text: "it is green.", citations: [citation] },
      { type: "tool_use", id: "toolu_1", name: "f", input: { a: 1 } },
    ]);
  });

  it("writes an OpenAI-compatible endpoint's refusal as text, and stops for refusal", async () => {
    const { stream, events } = renderer();
    stream.push([{ type: "passthrough", choice: 0, fields: { role: "assistant", refusal: "I can't " } }]);
    stream.push([{ type: "passthrough", choice: 0, fields: { refusal: "help." } }, { type: "finish", choice: 0, reason: "stop" }]);
    stream.finish(accounted, "stop");
    expect(checked(events)).toEqual([...opened, ...block(1, 2), ...closed]);
    const message = await sdkMessage(events);
    expect(message).toMatchObject({ content: [{ type: "text", text: "I can't help." }], stop_reason: "refusal" });
  });
});
