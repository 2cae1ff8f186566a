import { ResponsesRequest$outboundSchema } from "@openrouter/sdk/models";
import { parseInput } from "@switchyard/runtime";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { responseObject } from "./responses-output.js";
import { responsesRequest } from "./responses.js";

const minimal = { model: "openai/gpt-4o", input: "Hello" };

/** The 400 message Switchyard answers a body with, or undefined when it parses. */
function refusal(body: unknown): string | undefined {
  try {
    parseInput(responsesRequest, body, "body");
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

describe("responsesRequest", () => {
  it("takes a string input and a list of items of every kind", () => {
    expect(refusal(minimal)).toBeUndefined();
    const items = [
      { role: "developer", content: "Be brief" },
      { type: "message", role: "user", content: [{ type: "input_text", text: "Look" }, { type: "input_image", image_url: "https://a.example/x.png", detail: "high" }] },
      { type: "message", role: "user", content: [{ type: "input_file", file_data: "data:application/pdf;base64,AAAA", filename: "a.pdf" }] },
      { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "Thinking" }], encrypted_content: "opaque" },
      { type: "message", role: "assistant", id: "msg_1", status: "completed", content: [{ type: "output_text", text: "Hi", annotations: [] }] },
      { type: "function_call", call_id: "call_1", name: "lookup", arguments: "{}", id: "fc_1", status: "completed" },
      { type: "function_call_output", call_id: "call_1", output: "42" },
      { type: "openrouter:datetime", id: "dt_1", status: "completed", datetime: "2026-01-01T00:00:00Z", timezone: "UTC" },
    ];
    expect(refusal({ ...minimal, input: items })).toBeUndefined();
  });

  it("takes reasoning items as Codex sends them back: no id, no format, content null", () => {
    const codex = [
      { type: "reasoning", summary: [], content: null, encrypted_content: "gAAAA-opaque" },
      { type: "reasoning", summary: [], content: [{ type: "reasoning_text", text: "hmm" }], encrypted_content: "switchyard:signature:anthropic-claude-v1::sig" },
      { type: "reasoning", summary: [{ type: "summary_text", text: "Plan" }], encrypted_content: null },
    ];
    expect(refusal({ ...minimal, input: codex })).toBeUndefined();
  });

  it("takes what @openrouter/sdk sends, defaults included", () => {
    const sent = ResponsesRequest$outboundSchema.parse({
      model: "openai/gpt-4o",
      input: [{ role: "user", content: "Hello" }],
      instructions: "Be brief",
      maxOutputTokens: 100,
      reasoning: { effort: "high", summary: "auto" },
      text: { format: { type: "json_schema", name: "answer", schema: { type: "object" }, strict: true } },
      tools: [{ type: "function", name: "lookup", parameters: { type: "object" } }, { type: "openrouter:datetime" }],
      toolChoice: { type: "function", name: "lookup" },
      include: ["reasoning.encrypted_content"],
      provider: { sort: "price" },
    });
    expect(sent).toMatchObject({ store: false, stream: false, service_tier: "auto" });
    expect(refusal(JSON.parse(JSON.stringify(sent)))).toBeUndefined();
  });

  it("refuses what a stateless gateway cannot do, saying why", () => {
    expect(refusal({ ...minimal, previous_response_id: "resp_1" })).toContain(
      "previous_response_id is not supported: Switchyard does not store responses; send the whole conversation in input",
    );
    expect(refusal({ ...minimal, store: true })).toContain("store: true is not supported");
    expect(refusal({ ...minimal, store: false, metadata: null, max_tool_calls: null, reasoning: null })).toBeUndefined();
    expect(refusal({ ...minimal, background: true })).toContain("background: true is not supported");
    expect(refusal({ ...minimal, conversation: "conv_1" })).toContain("conversation is not supported");
    expect(refusal({ ...minimal, truncation: "auto" })).toContain('truncation: "auto" is not supported');
    expect(refusal({ ...minimal, truncation: "disabled" })).toBeUndefined();
    expect(refusal({ ...minimal, include: ["reasoning.encrypted_content", "file_search_call.results"] })).toContain(
      'include value "file_search_call.results" is not supported',
    );
    expect(refusal({ ...minimal, input: [{ type: "item_reference", id: "msg_1" }] })).toContain("item_reference is not supported");
  });

  it("refuses unknown fields by name", () => {
    expect(refusal({ ...minimal, top_logprobs: 3, prompt: { id: "p" } })).toBe("Invalid body: unknown fields top_logprobs, prompt");
  });

  it("names the item and part that are wrong", () => {
    expect(refusal({ ...minimal, input: [{ type: "computer_call", id: "c" }] })).toContain('input: 0.type: "computer_call" is not an input item Switchyard takes');
    expect(refusal({ ...minimal, input: [{ role: "system", content: [{ type: "input_image", image_url: "https://a.example/x.png" }] }] })).toContain(
      "a system message takes input_text parts, not input_image",
    );
    expect(refusal({ ...minimal, input: [{ role: "user", content: [{ type: "input_image", detail: "auto" }] }] })).toContain(
      "an input_image needs image_url or file_id",
    );
    expect(refusal({ ...minimal, input: 5 })).toBe("Invalid body: input: must be a string or a list of input items");
    expect(refusal({ model: "openai/gpt-4o" })).toContain("input: is required");
  });

  it("checks function tools and tool choices", () => {
    expect(refusal({ ...minimal, tools: [{ type: "function", name: "bad name" }] })).toContain("tools.0: name: must be 1 to 64 letters");
    expect(refusal({ ...minimal, tools: [{ type: "openrouter:web_search", parameters: { max_results: 3 } }] })).toBeUndefined();
    expect(refusal({ ...minimal, tool_choice: { type: "function" } })).toBe("Invalid body: tool_choice.name: is required to choose a function");
    expect(refusal({ ...minimal, tool_choice: { type: "allowed_tools", tools: [] } })).toContain("must name a server tool of the request");
    expect(refusal({ ...minimal, tool_choice: "required" })).toBeUndefined();
  });
});

describe("the Responses contracts", () => {
  it("render as JSON Schema for the OpenAPI document", () => {
    const request = z.toJSONSchema(responsesRequest, { target: "draft-2020-12", io: "input", unrepresentable: "any" });
    expect(Object.keys(request.properties ?? {})).toContain("input");
    const answer = z.toJSONSchema(responseObject, { target: "draft-2020-12", io: "output", unrepresentable: "any" });
    expect(answer.required).toContain("frequency_penalty");
  });
});
