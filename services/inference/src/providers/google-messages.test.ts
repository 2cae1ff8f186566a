import { describe, expect, it } from "vitest";
import { generateContentRequest } from "./google-messages.js";

const messages = [{ role: "user", content: "Hi" }];
const fn = (name: string) => ({ type: "function", function: { name, parameters: { type: "object" } } });
const allowed = (mode: string) => ({ type: "allowed_tools", allowed_tools: { mode, tools: [{ type: "function", function: { name: "b" } }] } });

describe("generateContent's tools and JSON mode", () => {
  it("declares only the functions an allowed_tools choice allows, calling one when its mode requires it", () => {
    const required = generateContentRequest({ messages, tools: [fn("a"), fn("b")], tool_choice: allowed("required") });
    expect(required.tools).toEqual([{ functionDeclarations: [{ name: "b", parameters: { type: "object" } }] }]);
    expect(required.toolConfig).toEqual({ functionCallingConfig: { mode: "ANY" } });
    expect(generateContentRequest({ messages, tools: [fn("a"), fn("b")], tool_choice: allowed("auto") }).toolConfig).toEqual({ functionCallingConfig: { mode: "AUTO" } });
  });

  it("binds JSON mode's own schema (json_object with schema) as a json_schema's", () => {
    const schema = { type: "object", properties: { city: { type: "string" } } };
    const config = generateContentRequest({ messages, response_format: { type: "json_object", schema } }).generationConfig;
    expect(config).toMatchObject({ responseMimeType: "application/json", responseJsonSchema: schema });
    expect(generateContentRequest({ messages, response_format: { type: "json_object" } }).generationConfig).toEqual({ responseMimeType: "application/json" });
  });
});

describe("a tool's result as a function response", () => {
  it("reads JSON text as its object, and text nested deeper than a request may as the text it is", () => {
    const call = { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: "{}" } }] };
    const answered = (content: string) => generateContentRequest({ messages: [...messages, call, { role: "tool", tool_call_id: "c1", content }] });
    type Turn = { parts: Array<{ functionResponse: { response: unknown } }> };
    const response = (request: ReturnType<typeof generateContentRequest>) => (request.contents as Turn[]).at(-1)!.parts[0]!.functionResponse.response;
    expect(response(answered('{"temperature": 21}'))).toEqual({ temperature: 21 });
    const deep = `${'{"a":'.repeat(100_000)}1${"}".repeat(100_000)}`;
    const request = answered(deep);
    expect(response(request)).toEqual({ content: deep });
    // What the adapter sends must still be written as JSON.
    expect(JSON.stringify(request).length).toBeGreaterThan(deep.length);
  });
});
