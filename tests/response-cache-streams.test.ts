import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { startFakeProvider, type FakeProvider } from "./support/fake-provider.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";

let gw: TestGateway;
let alpha: FakeProvider;
let key: string;
let openai: OpenAI;
let anthropic: Anthropic;

const pricing = { prompt: "0.000001", completion: "0.000002" };
const cached = { "X-OpenRouter-Cache": "true" };

beforeAll(async () => {
  alpha = await startFakeProvider("alpha");
  const catalog = {
    providers: [{ slug: "alpha", name: "Alpha", adapter: "openai-compatible", base_url: alpha.baseUrl, api_key_env: "ALPHA_KEY" }],
    models: [{ id: "cache/ok", name: "Cached", context_length: 8000, endpoints: [{ provider: "alpha", upstream_model: "ok", pricing, supported_parameters: ["temperature", "max_tokens"] }] }],
  };
  gw = await startTestGateway(await catalogEnv(catalog));
  key = String((await gw.call("POST", "/keys", { body: { name: "cache streams" } })).body.key);
  openai = new OpenAI({ apiKey: key, baseURL: gw.apiUrl, maxRetries: 0, defaultHeaders: cached });
  anthropic = new Anthropic({ apiKey: key, baseURL: `${gw.baseUrl}/api`, maxRetries: 0, defaultHeaders: cached });
});
afterAll(async () => {
  await gw?.stop();
  await alpha?.stop();
});

const calls = () => alpha.requests.length;
const generation = async (id: string) => (await gw.call("GET", `/generation?id=${id}`, { key })).body.data as Record<string, unknown>;

describe("response cache, streamed answers", () => {
  it("replays a streamed chat completion as SSE the openai client parses, with zero usage and no provider call", async () => {
    const params = { model: "cache/ok", messages: [{ role: "user" as const, content: "Stream hello" }], stream: true as const };
    const read = async () => {
      const { data: stream, response } = await openai.chat.completions.create(params).withResponse();
      let text = "";
      let id = "";
      let usage: Record<string, unknown> | undefined;
      let finish: string | null = null;
      for await (const chunk of stream) {
        id = chunk.id;
        text += chunk.choices[0]?.delta.content ?? "";
        finish = chunk.choices[0]?.finish_reason ?? finish;
        if (chunk.usage) usage = chunk.usage as unknown as Record<string, unknown>;
      }
      return { text, id, usage, finish, status: response.headers.get("x-openrouter-cache-status"), generationId: response.headers.get("x-generation-id") };
    };
    const first = await read();
    expect(first.status).toBe("MISS");
    expect(first.text).toBe("Hello from alpha");
    expect(first.usage?.cost).toBeGreaterThan(0);
    const before = calls();
    const second = await read();
    expect(calls()).toBe(before);
    expect(second).toMatchObject({ status: "HIT", text: "Hello from alpha", finish: "stop" });
    expect(second.id).not.toBe(first.id);
    expect(second.generationId).toBe(second.id);
    expect(second.usage).toMatchObject({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, cost: 0 });
    const record = await generation(second.id);
    expect(record).toMatchObject({ streamed: true, provider_name: "alpha", total_cost: 0, cache_source_id: first.id });
  });

  it("keeps streamed and buffered answers apart, as OpenRouter does", async () => {
    const messages = [{ role: "user" as const, content: "Either way" }];
    const stream = await openai.chat.completions.create({ model: "cache/ok", messages, stream: true });
    for await (const _ of stream) void _;
    const before = calls();
    const { response } = await openai.chat.completions.create({ model: "cache/ok", messages }).withResponse();
    expect(response.headers.get("x-openrouter-cache-status")).toBe("MISS");
    expect(calls()).toBe(before + 1);
  });

  it("ends a replayed chat stream with its usage chunk and [DONE], on the wire", async () => {
    const body = { model: "cache/ok", messages: [{ role: "user", content: "Wire check" }], stream: true };
    const post = () => fetch(`${gw.apiUrl}/chat/completions`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...cached }, body: JSON.stringify(body) });
    await (await post()).text();
    const res = await post();
    expect(res.headers.get("x-openrouter-cache-status")).toBe("HIT");
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const frames = (await res.text()).split("\n\n").filter((f) => f.startsWith("data: "));
    expect(frames.at(-1)).toBe("data: [DONE]");
    const last = JSON.parse(frames.at(-2)!.slice(6)) as { object: string; usage: { cost: number } };
    expect(last).toMatchObject({ object: "chat.completion.chunk", usage: { cost: 0 } });
  });

  it("replays a Responses stream the openai client parses", async () => {
    const params = { model: "cache/ok", input: "Responses hello" };
    const first = await openai.responses.stream(params).finalResponse();
    const before = calls();
    const stream = openai.responses.stream(params);
    const final = await stream.finalResponse();
    expect(calls()).toBe(before);
    expect(final.output_text).toBe("Hello from alpha");
    expect(final.output_text).toBe(first.output_text);
    expect(final.id).not.toBe(first.id);
    expect(final.usage).toMatchObject({ input_tokens: 0, output_tokens: 0 });
  });

  it("replays a Messages stream the Anthropic client parses, and a buffered message", async () => {
    const params = { model: "cache/ok", max_tokens: 100, messages: [{ role: "user" as const, content: "Messages hello" }] };
    const first = await anthropic.messages.stream(params).finalMessage();
    const before = calls();
    const events: string[] = [];
    const stream = anthropic.messages.stream(params);
    stream.on("streamEvent", (event) => events.push(event.type));
    const again = await stream.finalMessage();
    expect(calls()).toBe(before);
    expect(again.content).toEqual(first.content);
    expect(again.content).toHaveLength(1);
    expect(again.content[0]).toMatchObject({ type: "text", text: "Hello from alpha" });
    expect(again.id).not.toBe(first.id);
    expect(again.usage).toMatchObject({ input_tokens: 0, output_tokens: 0 });
    expect(events[0]).toBe("message_start");
    expect(events.at(-1)).toBe("message_stop");

    await anthropic.messages.create(params);
    const buffered = await anthropic.messages.create(params).withResponse();
    expect(buffered.response.headers.get("x-openrouter-cache-status")).toBe("HIT");
    expect(buffered.data.content).toEqual(first.content);
    expect(calls()).toBe(before + 1);
  });

  it("keeps Messages answers apart by the Anthropic headers their own wire forwards", async () => {
    const params = { model: "cache/ok", max_tokens: 100, messages: [{ role: "user" as const, content: "Beta hello" }] };
    const beta = (name: string) => ({ headers: { "anthropic-beta": name } });
    await anthropic.messages.create(params, beta("context-1m-2025-08-07"));
    const same = await anthropic.messages.create(params, beta("context-1m-2025-08-07")).withResponse();
    expect(same.response.headers.get("x-openrouter-cache-status")).toBe("HIT");
    const other = await anthropic.messages.create(params, beta("output-128k-2025-02-19")).withResponse();
    expect(other.response.headers.get("x-openrouter-cache-status")).toBe("MISS");
  });

  it("leaves count_tokens alone: no lookup and no cache headers", async () => {
    const counted = await anthropic.messages.countTokens({ model: "cache/ok", messages: [{ role: "user", content: "Count me" }] }).withResponse();
    expect(counted.data.input_tokens).toBeGreaterThan(0);
    expect(counted.response.headers.get("x-openrouter-cache-status")).toBeNull();
  });

  it("replays a legacy completion", async () => {
    const body = { model: "cache/ok", prompt: "Once upon a time", max_tokens: 20 };
    await gw.call("POST", "/completions", { key, body, headers: cached });
    const before = calls();
    const hit = await gw.call("POST", "/completions", { key, body, headers: cached });
    expect(hit.headers.get("x-openrouter-cache-status")).toBe("HIT");
    expect(calls()).toBe(before);
    expect(hit.body).toMatchObject({ object: "text_completion", choices: [{ text: "Hello from alpha" }], usage: { prompt_tokens: 0, completion_tokens: 0, cost: 0 } });
  });
});
