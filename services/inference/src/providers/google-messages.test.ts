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
