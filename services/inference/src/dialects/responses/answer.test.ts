import { OpenResponsesResult$inboundSchema } from "@openrouter/sdk/models";
import { responseObject, responsesRequest, type ResponsesRequestInput, type ServerToolCallDetail } from "@switchyard/contracts";
import { addOutputText, parseResponse } from "openai/lib/ResponsesParser";
import type { Response } from "openai/resources/responses/responses";
import { describe, expect, it } from "vitest";
import type { Completion, CompletionChoice } from "../../generation/parts.js";
import type { Accounted } from "../../accounting.js";
import { responseBody, responseFrame, type ResponseFrame } from "./answer.js";

const generationId = "gen-1767225600-abcDEF0123456789ghij";

const accounted: Accounted = {
  usage: { promptTokens: 10, completionTokens: 20, cachedTokens: 4, cacheWriteTokens: 0, reasoningTokens: 6 },
  estimated: false,
  cost: { prompt: 1_000_000_000n, completion: 2_000_000_000n, request: 0n, total: 3_000_000_000n },
  charge: { charged: 3_000_000_000n, reported: 3_000_000_000n },
  isByok: false,
  billed: 3_000_000_000n,
};

const frameFor = (body: Partial<ResponsesRequestInput> = {}): ResponseFrame =>
  responseFrame(responsesRequest.parse({ model: "openai/gpt-4o", input: "Hi", ...body }), generationId, 1_767_225_600, "openai/gpt-4o");

function choice(over: Partial<CompletionChoice> = {}): CompletionChoice {
  return { index: 0, text: "Hello", reasoning: null, reasoningDetails: [], toolCalls: [], finishReason: "stop", fields: {}, choiceFields: {}, ...over };
}

const completion = (...choices: CompletionChoice[]): Completion => ({ id: "up-1", choices, usage: undefined, systemFingerprint: null, serviceTier: null });

/** The paths at which the SDK's lenient unions gave up on a value (it keeps it as `isUnknown`). */
function unknownPaths(value: unknown, path = ""): string[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => unknownPaths(v, `${path}${path ? "." : ""}${i}`));
  if (!value || typeof value !== "object") return [];
  if ((value as { isUnknown?: unknown }).isUnknown === true) return [path];
  return Object.entries(value).flatMap(([k, v]) => unknownPaths(v, `${path}${path ? "." : ""}${k}`));
}

/** The answer as @openrouter/sdk reads it off the wire: it throws on a missing key, and keeps items it cannot read as unknown. */
function sdkRead(body: unknown): Record<string, unknown> {
  const result = OpenResponsesResult$inboundSchema.safeParse(JSON.parse(JSON.stringify(body)));
  expect(result.error).toBeUndefined();
  return result.data as Record<string, unknown>;
}

/** Both SDKs and our contract read the answer; nothing in it is unknown to @openrouter/sdk. */
function expectReadable(body: ReturnType<typeof responseBody>): void {
  expect(responseObject.safeParse(body).error).toBeUndefined();
  expect(unknownPaths(sdkRead(body))).toEqual([]);
  const copy = structuredClone(body) as unknown as Response;
  addOutputText(copy);
  expect(copy.output_text).toBe(body.output_text);
}

describe("responseBody", () => {
  it("answers a text completion with our generation id, the echoed settings and OpenRouter's usage", () => {
    const body = responseBody({ frame: frameFor({ instructions: "Be brief", temperature: 0.5 }), completion: completion(choice()), accounted, completedAt: 1_767_225_601 });
    expectReadable(body);
    expect(body).toMatchObject({
      id: generationId,
      object: "response",
      created_at: 1_767_225_600,
      completed_at: 1_767_225_601,
      status: "completed",
      error: null,
      incomplete_details: null,
      model: "openai/gpt-4o",
      output_text: "Hello",
      instructions: "Be brief",
      temperature: 0.5,
      top_p: null,
      frequency_penalty: null,
      presence_penalty: null,
      parallel_tool_calls: true,
      tool_choice: "auto",
      tools: [],
      store: false,
      truncation: "disabled",
      text: { format: { type: "text" } },
    });
    expect(body.output).toEqual([
      { type: "message", id: "msg_1767225600abcDEF0123456789ghij_0", role: "assistant", status: "completed", content: [{ type: "output_text", text: "Hello", annotations: [], logprobs: [] }] },
    ]);
    expect(body.usage).toEqual({
      input_tokens: 10,
      input_tokens_details: { cached_tokens: 4 },
      output_tokens: 20,
      output_tokens_details: { reasoning_tokens: 6 },
      total_tokens: 30,
      cost: 0.003,
      is_byok: false,
      cost_details: { upstream_inference_cost: 0.003, upstream_inference_input_cost: 0.001, upstream_inference_output_cost: 0.002 },
      server_tool_use_details: { tool_calls_requested: 0, tool_calls_executed: 0 },
    });
  });

  it("carries every key @openrouter/sdk requires: the SDK refuses the answer without one of them", () => {
    const body = responseBody({ frame: frameFor(), completion: completion(choice()), accounted }) as unknown as Record<string, unknown>;
    const required = ["id", "object", "created_at", "completed_at", "status", "error", "incomplete_details", "model", "output", "instructions"];
    required.push("metadata", "parallel_tool_calls", "temperature", "top_p", "frequency_penalty", "presence_penalty", "tool_choice", "tools");
    for (const key of required) {
      const { [key]: _gone, ...rest } = body;
      expect(OpenResponsesResult$inboundSchema.safeParse(rest).success, key).toBe(false);
    }
  });

  it("shows reasoning summaries, encrypted reasoning under the provider's id, then the function calls", () => {
    const body = responseBody({
      frame: frameFor({ reasoning: { effort: "high", summary: "auto" }, tools: [{ type: "function", name: "lookup" }] }),
      completion: completion(
        choice({
          text: null,
          reasoning: "Plan",
          reasoningDetails: [
            { type: "reasoning.summary", summary: "Plan", format: "openai-responses-v1", index: 0 },
            { type: "reasoning.encrypted", data: "blob", id: "rs_upstream", format: "openai-responses-v1", index: 1 },
          ],
          toolCalls: [{ id: "call_1", type: "function", function: { name: "lookup", arguments: '{"q":1}' } }],
          finishReason: "tool_calls",
        }),
      ),
      accounted,
    });
    expectReadable(body);
    expect(body.output.map((i) => i.type)).toEqual(["reasoning", "reasoning", "function_call"]);
    expect(body.output[0]).toMatchObject({ summary: [{ type: "summary_text", text: "Plan" }], format: "openai-responses-v1", status: "completed" });
    expect(body.output[1]).toMatchObject({ id: "rs_upstream", encrypted_content: "blob", summary: [] });
    expect(body.output[2]).toEqual({ type: "function_call", id: expect.stringMatching(/^fc_/), call_id: "call_1", name: "lookup", arguments: '{"q":1}', status: "completed" });
    expect(body.tools).toEqual([{ type: "function", name: "lookup", description: null, parameters: null, strict: true }]);
    expect(body.reasoning).toEqual({ effort: "high", summary: "auto" });
  });

  it("shows a thinking block as reasoning text with its signature, or as a summary when summaries were asked for", () => {
    const thinking = choice({
      reasoning: "Let me think",
      reasoningDetails: [{ type: "reasoning.text", text: "Let me think", signature: "sig", format: "anthropic-claude-v1", index: 0 }],
    });
    const raw = responseBody({ frame: frameFor(), completion: completion(thinking), accounted });
    expectReadable(raw);
    const sealed = "switchyard:signature:anthropic-claude-v1::sig";
    expect(raw.output[0]).toMatchObject({ type: "reasoning", summary: [], content: [{ type: "reasoning_text", text: "Let me think" }], encrypted_content: sealed, format: "anthropic-claude-v1" });
    expect(raw.output[0]).not.toHaveProperty("signature");
    const summarized = responseBody({ frame: frameFor({ reasoning: { summary: "auto" } }), completion: completion(thinking), accounted });
    expect(summarized.output[0]).toMatchObject({ summary: [{ type: "summary_text", text: "Let me think" }], encrypted_content: sealed });
    expect(summarized.output[0]).not.toHaveProperty("content");
    const hidden = responseBody({ frame: frameFor({ reasoning: { exclude: true } }), completion: completion(thinking), accounted });
    expect(hidden.output.map((i) => i.type)).toEqual(["message"]);
  });

  it("is incomplete when the answer ran out of tokens or was filtered", () => {
    const long = responseBody({ frame: frameFor({ max_output_tokens: 5 }), completion: completion(choice({ finishReason: "max_tokens" })), accounted });
    expectReadable(long);
    expect(long).toMatchObject({ status: "incomplete", incomplete_details: { reason: "max_output_tokens" }, max_output_tokens: 5 });
    expect(long.output[0]).toMatchObject({ status: "incomplete" });
    const filtered = responseBody({ frame: frameFor(), completion: completion(choice({ finishReason: "SAFETY" })), accounted });
    expect(filtered).toMatchObject({ status: "incomplete", incomplete_details: { reason: "content_filter" } });
  });

  it("shows the server tool calls the gateway ran as OpenRouter's openrouter:* items, before the answer", () => {
    const calls: ServerToolCallDetail[] = [
      {
        type: "reasoning.server_tool_call",
        tool_name: "openrouter:web_search",
        tool_call_id: "call_ws",
        arguments: '{"query":"switchyard"}',
        result: JSON.stringify({ query: "switchyard", results: [{ title: "S", url: "https://s.example", snippet: "x" }] }),
      },
      { type: "reasoning.server_tool_call", tool_name: "openrouter:datetime", tool_call_id: "call_dt", arguments: "{}", result: '{"datetime":"2026-01-01T00:00:00+00:00","timezone":"UTC"}' },
      {
        type: "reasoning.server_tool_call",
        tool_name: "openrouter:bash",
        tool_call_id: "call_b",
        arguments: '{"command":"ls"}',
        result: JSON.stringify({ container_id: "c1", command: "ls", stdout: "a\n", stderr: "", exit_code: 0, timed_out: false, truncated: false }),
      },
      {
        type: "reasoning.server_tool_call",
        tool_name: "openrouter:shell",
        tool_call_id: "call_s",
        arguments: '{"commands":["sleep 9","echo"]}',
        result: JSON.stringify({ container_id: "c1", results: [{ stdout: "", stderr: "", exit_code: null, timed_out: true }, { stdout: "\n", stderr: "", exit_code: 0, timed_out: false }] }),
      },
      { type: "reasoning.server_tool_call", tool_name: "openrouter:shell", tool_call_id: "call_x", arguments: "{}", result: '{"error":"commands must be a non-empty array of strings"}' },
    ];
    const toolUse = { tool_calls_requested: 5, tool_calls_executed: 4, web_search_requests: 1 };
    const body = responseBody({ frame: frameFor({ tools: [{ type: "openrouter:web_search" }], tool_choice: { type: "openrouter:web_search" } }), completion: completion(choice()), accounted, serverCalls: calls, toolUse });
    expect(responseObject.safeParse(body).error).toBeUndefined();
    // The echoed server tool is one @openrouter/sdk does not model (OpenRouter's own answers echo it too); every item it reads.
    expect(unknownPaths(sdkRead(body))).toEqual(["tools.0"]);
    expect(body.tool_choice).toBe("required");
    expect(body.output.map((i) => i.type)).toEqual(["openrouter:web_search", "openrouter:datetime", "openrouter:bash", "openrouter:shell", "openrouter:shell", "message"]);
    expect(body.output[0]).toMatchObject({ status: "completed", action: { type: "search", query: "switchyard", sources: [{ type: "url", url: "https://s.example" }] } });
    expect(body.output[1]).toMatchObject({ datetime: "2026-01-01T00:00:00+00:00", timezone: "UTC" });
    expect(body.output[2]).toMatchObject({ call_id: "call_b", command: "ls", stdout: "a\n", exitCode: 0, container_id: "c1", status: "completed" });
    expect(body.output[3]).toMatchObject({ action: { commands: ["sleep 9", "echo"] }, output: [{ outcome: { type: "timeout" } }, { outcome: { type: "exit", exit_code: 0 } }] });
    expect(body.output[4]).toMatchObject({ status: "failed", error: "commands must be a non-empty array of strings" });
    expect(body.usage?.server_tool_use_details).toEqual(toolUse);
  });

  it("turns the provider's web citations into annotations and lets the openai SDK parse a JSON answer", () => {
    const annotations = [{ type: "url_citation", url_citation: { url: "https://s.example", title: "S", start_index: 0, end_index: 4, content: "x" } }];
    const format = { type: "json_schema", name: "answer", schema: { type: "object" } } as const;
    const body = responseBody({ frame: frameFor({ text: { format } }), completion: completion(choice({ text: '{"a":1}', fields: { annotations } })), accounted: null });
    expectReadable(body);
    expect(body.usage).toBeNull();
    expect(body.output[0]).toMatchObject({ content: [{ annotations: [{ type: "url_citation", url: "https://s.example", title: "S", start_index: 0, end_index: 4 }] }] });
    const parsed = parseResponse(body as unknown as Response, { model: "openai/gpt-4o", text: { format } });
    expect(parsed.output_parsed).toEqual({ a: 1 });
  });

  it("shows choice 0 only", () => {
    const body = responseBody({ frame: frameFor(), completion: completion(choice({ index: 1, text: "other" }), choice()), accounted });
    expect(body.output_text).toBe("Hello");
  });
});
