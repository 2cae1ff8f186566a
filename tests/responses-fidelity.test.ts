import OpenAI from "openai";
import type { Response, ResponseInputItem } from "openai/resources/responses/responses";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { startFakeChat, type ChatReply, type FakeChat } from "./support/fake-chat-script.js";
import { startFakeResponses, type FakeResponses } from "./support/fake-responses.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";
import { collect } from "./support/responses-events.js";

/**
 * What a Responses answer shows when the model stops early, which tool choices are refused, and which
 * reasoning an OpenAI-compatible endpoint is sent: buffered and streamed answers alike, nothing dropped
 * silently, nothing of another provider's.
 */
let gw: TestGateway;
let chat: FakeChat;
let responses: FakeResponses;
let openai: OpenAI;

const call = { id: "call_1", name: "get_weather", arguments: '{"city":"Paris"}' };
/** The scripted answers of the OpenAI-compatible endpoint, by upstream model. */
const replies: Record<string, ChatReply> = {
  cut: { content: "", finish: "length" },
  "think-cut": { reasoning: "The user wants a story.", content: "", finish: "length" },
  "call-cut": { content: "Let me check.", calls: [call], finish: "length" },
  ok: { content: "Hello." },
};

const pricing = { prompt: "0.000002", completion: "0.000008" };
const model = (id: string, provider: string, upstream: string) => ({
  id,
  name: id,
  context_length: 200000,
  input_modalities: ["text"],
  endpoints: [{ provider, upstream_model: upstream, pricing, max_completion_tokens: 8192 }],
});

beforeAll(async () => {
  chat = await startFakeChat((body) => replies[String(body.model)] ?? replies.ok!);
  responses = await startFakeResponses();
  const catalog = {
    providers: [
      { slug: "agent", name: "Agent", adapter: "openai-compatible", base_url: chat.baseUrl, requires_api_key: false },
      { slug: "openai", name: "OpenAI", adapter: "openai", base_url: responses.baseUrl, requires_api_key: false },
    ],
    models: [
      model("agent/cut", "agent", "cut"),
      model("agent/think-cut", "agent", "think-cut"),
      model("agent/call-cut", "agent", "call-cut"),
      model("compat/ok", "agent", "ok"),
      model("openai/unsaid", "openai", "gpt-reasoning-unsaid-incomplete"),
      model("openai/gpt", "openai", "gpt"),
    ],
  };
  gw = await startTestGateway(await catalogEnv(catalog));
  const key = String((await gw.call("POST", "/keys", { body: { name: "fidelity" } })).body.key);
  openai = new OpenAI({ apiKey: key, baseURL: gw.apiUrl });
}, 60_000);
afterAll(async () => {
  await gw?.stop();
  await Promise.all([chat?.stop(), responses?.stop()]);
});

/** Each output item's type and status, in order. */
const outline = (r: Pick<Response, "output">) => r.output.map((item) => [item.type, "status" in item ? item.status : undefined]);

const weather = { type: "function" as const, name: "get_weather", description: "Weather by city", parameters: { type: "object", properties: { city: { type: "string" } } }, strict: false };

describe("an answer cut short by the output limit", () => {
  const cases: Array<[string, string, Array<[string, string]>, boolean]> = [
    ["before a word", "agent/cut", [], false],
    ["after reasoning only, from a chat endpoint", "agent/think-cut", [["reasoning", "incomplete"]], false],
    ["after words and a call", "agent/call-cut", [["message", "completed"], ["function_call", "completed"]], true],
    ["after reasoning only, from OpenAI's Responses API", "openai/unsaid", [["reasoning", "incomplete"]], false],
  ];
  for (const [title, id, expected, tools] of cases) {
    it(`${title}: buffered and streamed show the same items and statuses`, async () => {
      const params = { model: id, input: "Write a story", max_output_tokens: 16, ...(tools ? { tools: [weather] } : {}) };
      const buffered = await openai.responses.create(params);
      expect(buffered).toMatchObject({ status: "incomplete", incomplete_details: { reason: "max_output_tokens" } });
      expect(outline(buffered)).toEqual(expected);
      const stream = openai.responses.stream(params);
      const events = await collect(stream);
      const last = events.at(-1)!;
      expect(last.type).toBe("response.incomplete");
      if (last.type !== "response.incomplete") return;
      expect(outline(last.response)).toEqual(expected);
      expect(outline(await stream.finalResponse())).toEqual(expected);
      expect(last.response.output_text).toBe(buffered.output_text);
    });
  }
});

describe("a tool choice no tool of the request can satisfy", () => {
  const refused = async (params: Record<string, unknown>) => {
    const error = await openai.responses.create({ model: "openai/gpt", input: "Hi", ...params } as Parameters<OpenAI["responses"]["create"]>[0]).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    return (error as InstanceType<typeof OpenAI.BadRequestError>).message;
  };

  it("is refused with 400 naming tool_choice when the request declares no tool", async () => {
    const before = responses.requests.length;
    expect(await refused({ tool_choice: "required" })).toMatch(/tool_choice/);
    expect(await refused({ tool_choice: { type: "function", name: "get_weather" } })).toMatch(/tool_choice/);
    expect(responses.requests.length).toBe(before);
  });

  it("is refused when it names a function the tools do not have", async () => {
    expect(await refused({ tools: [weather], tool_choice: { type: "function", name: "get_time" } })).toMatch(/tool_choice.*get_time/);
  });

  it("reaches OpenAI's Responses API when a tool is there to choose", async () => {
    await openai.responses.create({ model: "openai/gpt", input: "Hi", tools: [weather], tool_choice: "required" });
    expect(responses.requests.at(-1)!.body).toMatchObject({ tool_choice: "required" });
  });
});

describe("OpenAI's reasoning sent back to an OpenAI-compatible endpoint", () => {
  const reasoning = {
    type: "reasoning",
    summary: [{ type: "summary_text", text: "The caller wants the weather." }],
    encrypted_content: "gAAAAB-openai-encrypted",
  } as unknown as ResponseInputItem;
  const sent = () => chat.requests.at(-1)!.messages as Array<Record<string, unknown>>;

  it("is left out, as Codex sends it back with a call and its result", async () => {
    const input: ResponseInputItem[] = [
      { role: "user", content: "Weather in Paris?" },
      reasoning,
      { type: "function_call", call_id: "call_1", name: "get_weather", arguments: '{"city":"Paris"}' },
      { type: "function_call_output", call_id: "call_1", output: "sunny" },
    ];
    await openai.responses.create({ model: "compat/ok", input, tools: [weather] });
    const messages = sent();
    expect(messages.map((m) => m.role)).toEqual(["user", "assistant", "tool"]);
    expect(messages[1]).not.toHaveProperty("reasoning_details");
    expect(JSON.stringify(messages)).not.toContain("gAAAAB-openai-encrypted");
    expect(JSON.stringify(messages)).not.toContain("The caller wants the weather.");
  });

  it("makes no empty assistant turn when a user message follows it", async () => {
    await openai.responses.create({ model: "compat/ok", input: [{ role: "user", content: "Write a story" }, reasoning, { role: "user", content: "Go on" }] });
    expect(sent()).toEqual([
      { role: "user", content: "Write a story" },
      { role: "user", content: "Go on" },
    ]);
  });

  it("still reaches OpenAI's Responses API", async () => {
    await openai.responses.create({ model: "openai/gpt", input: [{ role: "user", content: "Write a story" }, reasoning, { role: "user", content: "Go on" }] });
    expect(responses.requests.at(-1)!.body.input).toContainEqual(expect.objectContaining({ type: "reasoning", encrypted_content: "gAAAAB-openai-encrypted" }));
  });
});
