import { StreamEvents$inboundSchema } from "@openrouter/sdk/models";
import { responseObject, responsesRequest, type ResponsesRequestInput, type ServerToolCallDetail } from "@switchyard/contracts";
import { accumulateResponse } from "openai/lib/responses/ResponseAccumulator";
import type { Response, ResponseStreamEvent } from "openai/resources/responses/responses";
import { describe, expect, it } from "vitest";
import type { StreamPart } from "../../generation/parts.js";
import type { Accounted } from "../../accounting.js";
import { responseBody, responseFrame } from "./answer.js";
import { ResponsesEvents, type ResponseEvent } from "./events.js";

const generationId = "gen-1767225600-abcDEF0123456789ghij";
const createdAt = 1_767_225_600;
const completedAt = 1_767_225_609;

const accounted: Accounted = {
  usage: { promptTokens: 10, completionTokens: 20, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 },
  estimated: false,
  cost: { prompt: 1_000_000_000n, completion: 2_000_000_000n, request: 0n, total: 3_000_000_000n },
  charge: { charged: 3_000_000_000n, reported: 3_000_000_000n },
  isByok: false,
  billed: 3_000_000_000n,
};

const frameFor = (body: Partial<ResponsesRequestInput> = {}) =>
  responseFrame(responsesRequest.parse({ model: "openai/gpt-4o", input: "Hi", stream: true, ...body }), generationId, createdAt, "openai/gpt-4o");

/** A renderer writing into a list, with a fixed clock. */
function renderer(body: Partial<ResponsesRequestInput> = {}) {
  const events: ResponseEvent[] = [];
  const stream = new ResponsesEvents((event) => events.push(event), frameFor(body), () => completedAt);
  stream.start();
  return { stream, events };
}

const text = (value: string): StreamPart => ({ type: "text", choice: 0, text: value });
const reasoning = (value: string): StreamPart => ({ type: "reasoning", choice: 0, text: value });
const detail = (value: Record<string, unknown> & { type: string }): StreamPart => ({ type: "reasoning-detail", choice: 0, detail: value });

/** The paths at which the SDK's lenient unions gave up on a value (it keeps it as `isUnknown`). */
function unknownPaths(value: unknown, path = ""): string[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => unknownPaths(v, `${path}${path ? "." : ""}${i}`));
  if (!value || typeof value !== "object") return [];
  if ((value as { isUnknown?: unknown }).isUnknown === true) return [path];
  return Object.entries(value).flatMap(([k, v]) => unknownPaths(v, `${path}${path ? "." : ""}${k}`));
}

/**
 * Every event is one @openrouter/sdk reads in full, numbered from 0 without a gap; the openai SDK's
 * accumulator builds from them the output the last event states. Returns the event types in order.
 */
function checked(events: ResponseEvent[]): string[] {
  events.forEach((event, i) => {
    expect(event.sequence_number).toBe(i);
    const read = StreamEvents$inboundSchema.safeParse(JSON.parse(JSON.stringify(event)));
    expect(read.error).toBeUndefined();
    // An echoed server tool is one @openrouter/sdk does not model; OpenRouter's own answers echo it too.
    expect(unknownPaths(read.data).filter((path) => !/^response\.tools\.\d+$/.test(path)), event.type).toEqual([]);
  });
  let snapshot: Response | undefined;
  for (const event of events) snapshot = accumulateResponse(structuredClone(event) as unknown as ResponseStreamEvent, snapshot);
  const last = events.at(-1)!;
  if ("response" in last) {
    expect(responseObject.safeParse(last.response).error).toBeUndefined();
    expect(snapshot!.output).toEqual((last.response as Response).output);
  }
  return events.map((e) => e.type);
}

const lifecycle = ["response.created", "response.in_progress"];
const textItem = ["response.output_item.added", "response.content_part.added"];
const textDone = ["response.output_text.done", "response.content_part.done", "response.output_item.done"];

describe("ResponsesEvents", () => {
  it("writes a text answer as the documented sequence, ending with the buffered answer's response", () => {
    const { stream, events } = renderer();
    stream.push([{ type: "metadata", id: "up-1", serviceTier: "default" }, { type: "passthrough", choice: 0, fields: { role: "assistant" } }, text("Hel")]);
    stream.push([text("lo"), { type: "finish", choice: 0, reason: "stop" }]);
    stream.finish(accounted, "stop");
    expect(checked(events)).toEqual([...lifecycle, ...textItem, "response.output_text.delta", "response.output_text.delta", ...textDone, "response.completed"]);
    expect(events[0]).toMatchObject({ response: { id: generationId, status: "in_progress", output: [], usage: null, completed_at: null } });
    expect(events[4]).toEqual({ type: "response.output_text.delta", item_id: expect.stringMatching(/^msg_/), output_index: 0, content_index: 0, delta: "Hel", logprobs: [], sequence_number: 4 });
    const buffered = responseBody({
      frame: frameFor(),
      completion: { id: "up-1", choices: [{ index: 0, text: "Hello", reasoning: null, reasoningDetails: [], toolCalls: [], finishReason: "stop", fields: {}, choiceFields: {} }], usage: undefined, systemFingerprint: null, serviceTier: "default" },
      accounted,
      completedAt,
    });
    expect(events.at(-1)!.response).toEqual(buffered);
  });

  it("writes function calls with their argument deltas, closing the message before them", () => {
    const { stream, events } = renderer({ tools: [{ type: "function", name: "lookup" }] });
    stream.push([text("Checking.")]);
    stream.push([{ type: "tool-call-start", choice: 0, index: 0, id: "call_1", name: "lookup" }, { type: "tool-call-delta", choice: 0, index: 0, arguments: '{"q":' }]);
    stream.push([{ type: "tool-call-delta", choice: 0, index: 0, arguments: "1}" }, { type: "tool-call-end", choice: 0, index: 0 }]);
    const response = stream.finish(accounted, "tool_calls");
    expect(checked(events)).toEqual([
      ...lifecycle,
      ...textItem,
      "response.output_text.delta",
      ...textDone,
      "response.output_item.added",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.done",
      "response.output_item.done",
      "response.completed",
    ]);
    expect(events.find((e) => e.type === "response.function_call_arguments.done")).toMatchObject({ name: "lookup", arguments: '{"q":1}', output_index: 1 });
    expect(response?.output[1]).toEqual({ type: "function_call", id: expect.stringMatching(/^fc_/), call_id: "call_1", name: "lookup", arguments: '{"q":1}', status: "completed" });
  });

  it("writes a provider's summaries as summary parts and its encrypted reasoning as an item of its own", () => {
    const { stream, events } = renderer({ reasoning: { effort: "high" } });
    stream.push([reasoning("Pl"), detail({ type: "reasoning.summary", summary: "Pl", index: 0, format: "openai-responses-v1" })]);
    stream.push([reasoning("an"), detail({ type: "reasoning.summary", summary: "an", index: 0 })]);
    stream.push([reasoning("Check"), detail({ type: "reasoning.summary", summary: "Check", index: 1 })]);
    stream.push([detail({ type: "reasoning.encrypted", data: "blob", id: "rs_upstream", format: "openai-responses-v1", index: 2 })]);
    stream.push([detail({ type: "reasoning.encrypted", data: "other", id: "x:1" })]);
    stream.push([text("Done")]);
    const response = stream.finish(accounted, "stop");
    const part = ["response.reasoning_summary_part.added", "response.reasoning_summary_text.delta"];
    const partDone = ["response.reasoning_summary_text.done", "response.reasoning_summary_part.done"];
    expect(checked(events)).toEqual([
      ...lifecycle,
      "response.output_item.added",
      ...part,
      "response.reasoning_summary_text.delta",
      ...partDone,
      ...part,
      ...partDone,
      "response.output_item.done",
      "response.output_item.added",
      "response.output_item.done",
      "response.output_item.added",
      "response.output_item.done",
      ...textItem,
      "response.output_text.delta",
      ...textDone,
      "response.completed",
    ]);
    // OpenAI's encrypted reasoning is as it came; data of no known format carries a mark with its id.
    expect(response?.output.slice(0, 3)).toEqual([
      { type: "reasoning", id: expect.stringMatching(/^rs_/), status: "completed", summary: [{ type: "summary_text", text: "Plan" }, { type: "summary_text", text: "Check" }], format: "openai-responses-v1" },
      { type: "reasoning", id: "rs_upstream", status: "completed", summary: [], encrypted_content: "blob", format: "openai-responses-v1" },
      { type: "reasoning", id: "x:1", status: "completed", summary: [], encrypted_content: "switchyard:encrypted:unknown:x%3A1:other" },
    ]);
  });

  it("writes a thinking block as reasoning text, with the signature that closes it in encrypted_content", () => {
    const { stream, events } = renderer();
    const format = "anthropic-claude-v1";
    stream.push([reasoning("hm"), detail({ type: "reasoning.text", text: "hm", format, index: 0 })]);
    stream.push([detail({ type: "reasoning.text", signature: "sig", format, index: 0 })]);
    stream.push([text("ok")]);
    const response = stream.finish(accounted, "stop");
    expect(checked(events)).toEqual([
      ...lifecycle,
      "response.output_item.added",
      "response.content_part.added",
      "response.reasoning_text.delta",
      "response.reasoning_text.done",
      "response.content_part.done",
      "response.output_item.done",
      ...textItem,
      "response.output_text.delta",
      ...textDone,
      "response.completed",
    ]);
    expect(response?.output[0]).toMatchObject({ content: [{ type: "reasoning_text", text: "hm" }], encrypted_content: `switchyard:signature:${format}::sig`, format, summary: [] });
    expect(events.find((e) => e.type === "response.output_item.done")?.item).toMatchObject({ encrypted_content: `switchyard:signature:${format}::sig` });
  });

  it("writes reasoning text as a summary when the request asked for summaries", () => {
    const { stream, events } = renderer({ reasoning: { summary: "auto" } });
    stream.push([reasoning("think")]);
    const response = stream.finish(accounted, "stop");
    expect(checked(events)).toEqual([
      ...lifecycle,
      "response.output_item.added",
      "response.reasoning_summary_part.added",
      "response.reasoning_summary_text.delta",
      "response.reasoning_summary_text.done",
      "response.reasoning_summary_part.done",
      "response.output_item.done",
      "response.completed",
    ]);
    expect(response?.output[0]).toMatchObject({ summary: [{ type: "summary_text", text: "think" }] });
  });

  it("writes a server tool call as its item, added and done", () => {
    const { stream, events } = renderer({ tools: [{ type: "openrouter:datetime" }] });
    const call: ServerToolCallDetail = { type: "reasoning.server_tool_call", tool_name: "openrouter:datetime", tool_call_id: "c", arguments: "{}", result: '{"datetime":"2026-01-01T00:00:00Z","timezone":"UTC"}' };
    stream.serverCalls([call]);
    stream.push([text("Midnight")]);
    stream.finish(accounted, "stop", { tool_calls_requested: 1, tool_calls_executed: 1 });
    const types = checked(events);
    expect(types.slice(2, 4)).toEqual(["response.output_item.added", "response.output_item.done"]);
    expect(events[2]).toMatchObject({ item: { type: "openrouter:datetime", status: "in_progress" } });
    expect(events.at(-1)).toMatchObject({ type: "response.completed", response: { output: [{ type: "openrouter:datetime", status: "completed" }, { type: "message" }] } });
  });

  it("ends an answer cut short as incomplete, its open item too", () => {
    const { stream, events } = renderer();
    stream.push([text("Once upon")]);
    stream.finish(accounted, "length");
    expect(checked(events).at(-1)).toBe("response.incomplete");
    expect(events.at(-1)).toMatchObject({ response: { status: "incomplete", incomplete_details: { reason: "max_output_tokens" }, output: [{ status: "incomplete" }] } });
  });

  it("fails with an error event, then response.failed carrying what was written", () => {
    const { stream, events } = renderer();
    stream.push([text("Hi")]);
    stream.fail(502, "the provider went away");
    stream.push([text("more")]);
    stream.finish(accounted, "stop");
    expect(checked(events)).toEqual([...lifecycle, ...textItem, "response.output_text.delta", "error", "response.failed"]);
    expect(events.at(-2)).toEqual({ type: "error", code: "server_error", message: "the provider went away", param: null, sequence_number: 5 });
    expect(events.at(-1)).toMatchObject({
      response: { status: "failed", error: { code: "server_error", message: "the provider went away" }, output: [{ type: "message", status: "incomplete", content: [{ text: "Hi" }] }] },
    });
  });

  it("shows choice 0 only", () => {
    const { stream, events } = renderer();
    stream.push([{ type: "text", choice: 1, text: "other" }, text("mine")]);
    const response = stream.finish(accounted, "stop");
    checked(events);
    expect(response?.output_text).toBe("mine");
  });
});
