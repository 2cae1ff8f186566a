import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { startFakeResponses, type FakeResponses } from "./support/fake-responses.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";

/**
 * A Responses request's `tool_choice` is checked against the tools the provider gets: a preset's tools count
 * (`@preset/<slug>`), and a preset's tool choice is checked as the request's own is.
 */
let gw: TestGateway;
let responses: FakeResponses;
let openai: OpenAI;

const pricing = { prompt: "0.000002", completion: "0.000008" };

/** A function tool as a preset saves it: in Chat Completions' shape. */
const chatTool = (name: string) => ({ type: "function", function: { name, description: `The ${name} function`, parameters: { type: "object", properties: {} } } });

const savePreset = async (slug: string, body: Record<string, unknown>) => {
  const saved = await gw.call("POST", `/presets/${slug}/chat/completions`, { body: { model: "openai/gpt", messages: [], ...body } });
  expect(saved.status).toBe(200);
};

beforeAll(async () => {
  responses = await startFakeResponses();
  const catalog = {
    providers: [{ slug: "openai", name: "OpenAI", adapter: "openai", base_url: responses.baseUrl, requires_api_key: false }],
    models: [{ id: "openai/gpt", name: "GPT", context_length: 200000, input_modalities: ["text"], endpoints: [{ provider: "openai", upstream_model: "gpt", pricing, max_completion_tokens: 8192 }] }],
  };
  gw = await startTestGateway(await catalogEnv(catalog));
  const key = String((await gw.call("POST", "/keys", { body: { name: "preset-tools" } })).body.key);
  openai = new OpenAI({ apiKey: key, baseURL: gw.apiUrl, maxRetries: 0 });
  await savePreset("weather-tools", { tools: [chatTool("get_weather")] });
  await savePreset("must-call", { tool_choice: "required" });
  await savePreset("calls-weather", { tools: [chatTool("get_weather")], tool_choice: { type: "function", function: { name: "get_weather" } } });
}, 60_000);
afterAll(async () => {
  await gw?.stop();
  await responses?.stop();
});

type Params = Parameters<OpenAI["responses"]["create"]>[0];

/** The 400's message, or undefined when the request was answered. */
const refusal = async (params: Record<string, unknown>): Promise<string | undefined> => {
  const error = await openai.responses.create({ input: "Weather in Paris?", stream: false, ...params } as Params).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (error === undefined) return undefined;
  expect(error).toBeInstanceOf(OpenAI.BadRequestError);
  return (error as InstanceType<typeof OpenAI.BadRequestError>).message;
};

const lastSent = () => responses.requests.at(-1)!.body;

describe("a Responses tool_choice beside a preset", () => {
  it('takes "required" when the preset supplies the tools', async () => {
    expect(await refusal({ model: "@preset/weather-tools", tool_choice: "required" })).toBeUndefined();
    expect(lastSent()).toMatchObject({ tool_choice: "required", tools: [expect.objectContaining({ type: "function", name: "get_weather" })] });
  });

  it("takes a function choice naming a tool of the preset", async () => {
    expect(await refusal({ model: "@preset/weather-tools", tool_choice: { type: "function", name: "get_weather" } })).toBeUndefined();
    expect(lastSent()).toMatchObject({ tool_choice: { type: "function", name: "get_weather" } });
  });

  it("still refuses a function choice naming a tool neither the request nor the preset has", async () => {
    const before = responses.requests.length;
    expect(await refusal({ model: "@preset/weather-tools", tool_choice: { type: "function", name: "get_time" } })).toMatch(/tool_choice.*get_time/);
    expect(responses.requests.length).toBe(before);
  });

  it('refuses a preset\'s "required" when neither the preset nor the request has a tool', async () => {
    const before = responses.requests.length;
    expect(await refusal({ model: "@preset/must-call" })).toMatch(/tool_choice/);
    expect(responses.requests.length).toBe(before);
    expect(await refusal({ model: "@preset/must-call", tools: [{ type: "function", name: "get_time", parameters: { type: "object", properties: {} }, strict: false }] })).toBeUndefined();
    expect(lastSent()).toMatchObject({ tool_choice: "required" });
  });

  it("refuses a preset's function choice once the request's own tools replace the preset's", async () => {
    expect(await refusal({ model: "@preset/calls-weather" })).toBeUndefined();
    expect(lastSent()).toMatchObject({ tool_choice: { type: "function", name: "get_weather" } });
    const own = [{ type: "function", name: "get_time", parameters: { type: "object", properties: {} }, strict: false }];
    expect(await refusal({ model: "@preset/calls-weather", tools: own })).toMatch(/tool_choice.*get_weather/);
  });
});
