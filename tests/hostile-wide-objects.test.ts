import { inputProblem, maxObjectFields, textProblem } from "@switchyard/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FakeAnthropic } from "./support/fake-anthropic.js";
import type { FakeProvider } from "./support/fake-provider.js";
import { bootstrapKey, type TestGateway } from "./support/gateway.js";
import { startHostileGateway, type HostileFixture } from "./support/hostile-fixture.js";

/**
 * Objects of 100,000 fields, through the router: in metadata, tool schemas, a response format, provider
 * options, a tool call's arguments, and at the top of management bodies. Parsing and validating one costs
 * up to a second of the event loop, so each is a short 400 that names the object and the limit, told from
 * the body's bytes before they are parsed, and no provider is called. Real bodies stay well inside the limit.
 */

let fx: HostileFixture;
let gw: TestGateway;
let alpha: FakeProvider;
let claude: FakeAnthropic;
let plain: string;
let filtered: string;

beforeAll(async () => {
  fx = await startHostileGateway(["tools", "response_format", "structured_outputs", "logit_bias"]);
  ({ gw, alpha, claude, plain, filtered } = fx);
}, 240_000);
afterAll(async () => {
  await fx?.stop();
});

interface Answer {
  error?: { code?: number; type?: string; message: string };
}

/** A POST of raw bytes. */
async function post(path: string, body: string | Buffer, key: string, contentType = "application/json") {
  const res = await fetch(`${gw.apiUrl}${path}`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": contentType }, body });
  const answer = (await res.json()) as Answer & Record<string, unknown>;
  return { status: res.status, body: answer };
}

/** An object of `count` fields `k0`, `k1`…, each holding `value`. */
const wide = (count: number, value: unknown): Record<string, unknown> => {
  const object: Record<string, unknown> = {};
  for (let index = 0; index < count; index++) object[`k${index}`] = value;
  return object;
};

const user = [{ role: "user", content: "hi" }];
const schema = (count: number) => ({ type: "object", properties: wide(count, { type: "string" }) });
const chatTool = (count: number) => ({ type: "function", function: { name: "f", parameters: schema(count) } });
const withCall = (model: string, args: string) => ({
  model,
  messages: [
    { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: args } }] },
    { role: "tool", tool_call_id: "c1", content: "done" },
  ],
});

const limit = `more than ${maxObjectFields} fields in one object`;
const count = 100_000;

describe("an object of 100,000 fields", () => {

  it.each([
    ["chat metadata", "/chat/completions", "metadata", () => ({ model: "chat/ok", messages: user, metadata: wide(count, "v") })],
    ["a chat tool's properties", "/chat/completions", "tools.0.function.parameters.properties", () => ({ model: "chat/ok", messages: user, tools: [chatTool(count)] })],
    ["an Anthropic model's tool", "/chat/completions", "tools.0.function.parameters.properties", () => ({ model: "anthropic/text", messages: user, tools: [chatTool(count)] })],
    [
      "a chat response format",
      "/chat/completions",
      "response_format.json_schema.schema.properties",
      () => ({ model: "chat/ok", messages: user, response_format: { type: "json_schema", json_schema: { name: "s", schema: schema(count) } } }),
    ],
    ["logit_bias", "/chat/completions", "logit_bias", () => ({ model: "chat/ok", messages: user, logit_bias: wide(count, 1) })],
    ["the fields of a chat body", "/chat/completions", "body", () => ({ model: "chat/ok", messages: user, ...wide(count, 1) })],
    ["a tool call's arguments", "/chat/completions", "messages.0.tool_calls.0.function.arguments", () => withCall("chat/ok", JSON.stringify(wide(count, "v")))],
    ["Responses metadata", "/responses", "metadata", () => ({ model: "chat/ok", input: "hi", metadata: wide(count, "v") })],
    ["a Responses tool's properties", "/responses", "tools.0.parameters.properties", () => ({ model: "chat/ok", input: "hi", tools: [{ type: "function", name: "f", parameters: schema(count) }] })],
    ["provider options", "/embeddings", "provider.options.alpha", () => ({ model: "chat/ok", input: "hi", provider: { options: { alpha: wide(count, 1) } } })],
  ] as const)("is a 400 naming it, given at once, filtered or not: %s", async (_title, path, field, body) => {
    const text = JSON.stringify(body());
    const before = fx.calls();
    for (const key of [plain, filtered]) {
      const res = await post(path, text, key);
      expect({ status: res.status, error: res.body.error }).toEqual({ status: 400, error: { code: 400, message: `Invalid body: ${field}: ${limit}` } });
    }
    expect(fx.calls()).toBe(before);
  });

  it.each([
    ["metadata", () => ({ model: "anthropic/text", max_tokens: 10, messages: user, metadata: wide(count, "v") })],
    ["tools.0.input_schema.properties", () => ({ model: "anthropic/text", max_tokens: 10, messages: user, tools: [{ name: "f", input_schema: schema(count) }] })],
  ] as const)("is refused on /messages in Anthropic's shape: %s", async (field, body) => {
    const before = fx.calls();
    const res = await post("/messages", JSON.stringify(body()), filtered);
    expect({ status: res.status, type: res.body.type, error: res.body.error }).toEqual({
      status: 400,
      type: "error",
      error: { type: "invalid_request_error", message: `Invalid body: ${field}: ${limit}` },
    });
    expect(fx.calls()).toBe(before);
  });

  it.each([
    ["/keys", { name: "wide", ...wide(count, 1) }],
    ["/guardrails", { name: "wide", ...wide(count, 1) }],
    ["/presets", { name: "wide", config: { model: "chat/ok", metadata: wide(count, "v") } }],
  ] as const)("is refused on management routes: %s", async (path, body) => {
    const res = await post(path, JSON.stringify(body), bootstrapKey);
    const field = path === "/presets" ? "config.metadata" : "body";
    expect({ status: res.status, message: res.body.error?.message }).toEqual({ status: 400, message: `Invalid body: ${field}: ${limit}` });
  });

  it("is refused in a UTF-16 body too, which is measured after it is parsed", async () => {
    const text = JSON.stringify({ model: "chat/ok", messages: user, metadata: wide(count, "v") });
    const res = await post("/chat/completions", Buffer.from(text, "utf16le"), plain, "application/json; charset=utf-16le");
    expect({ status: res.status, message: res.body.error?.message }).toEqual({ status: 400, message: `Invalid body: metadata: ${limit}` });
  });
});

describe("objects within the limit", () => {
  it("pass through as before: metadata of 16 pairs, tools of 500 properties, a schema of exactly the limit", async () => {
    const metadata = wide(16, "v");
    const tools = [chatTool(500), { type: "function", function: { name: "g", parameters: schema(maxObjectFields) } }];
    const res = await post("/chat/completions", JSON.stringify({ model: "chat/ok", messages: user, metadata, tools }), filtered);
    expect(res.status).toBe(200);
    const sent = alpha.requests.at(-1)!.body as { tools: Array<{ function: { parameters: { properties: object } } }> };
    expect(sent.tools.map((tool) => Object.keys(tool.function.parameters.properties).length)).toEqual([500, maxObjectFields]);

    const over = { type: "function", function: { name: "g", parameters: schema(maxObjectFields + 1) } };
    const refused = await post("/chat/completions", JSON.stringify({ model: "chat/ok", messages: user, tools: [over] }), plain);
    expect({ status: refused.status, message: refused.body.error?.message }).toEqual({ status: 400, message: `Invalid body: tools.0.function.parameters.properties: ${limit}` });
  });

  it("pass through on /messages and /responses", async () => {
    const messages = await post("/messages", JSON.stringify({ model: "anthropic/text", max_tokens: 10, messages: user, tools: [{ name: "f", input_schema: schema(500) }] }), plain);
    expect(messages.status).toBe(200);
    const input = claude.requests.at(-1)!.body.tools as Array<{ input_schema: { properties: object } }>;
    expect(Object.keys(input[0]!.input_schema.properties)).toHaveLength(500);
    const responses = await post("/responses", JSON.stringify({ model: "chat/ok", input: "hi", metadata: wide(16, "v"), tools: [{ type: "function", name: "f", parameters: schema(500) }] }), plain);
    expect(responses.status).toBe(200);
  });
});

describe("the limit read from text and from a parsed value", () => {
  it("names the same object in both, at the first field past the limit", () => {
    for (const value of [
      { a: { b: [wide(maxObjectFields + 1, 1)] } },
      wide(maxObjectFields + 1, { x: 1 }),
      { messages: [{ role: "assistant", tool_calls: [{ function: { arguments: JSON.stringify({ a: wide(maxObjectFields + 1, 1) }) } }] }] },
    ]) {
      const text = JSON.stringify(value);
      expect(inputProblem(value, "body")).toMatch(new RegExp(`: ${limit}$`));
      if (!text.includes("arguments")) expect(textProblem(text, "body")).toBe(inputProblem(value, "body"));
      if (!text.includes("arguments")) expect(textProblem(Buffer.from(text), "body")).toBe(inputProblem(value, "body"));
    }
    expect(inputProblem({ a: wide(maxObjectFields, 1), list: Array.from({ length: maxObjectFields * 2 }, () => 1) }, "body")).toBeUndefined();
    expect(textProblem(JSON.stringify({ a: wide(maxObjectFields, "x,y"), list: Array.from({ length: maxObjectFields * 2 }, () => 1) }), "body")).toBeUndefined();
  });
});
