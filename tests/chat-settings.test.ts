import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "./support/gateway.js";
import { startFakeUpstream, type FakeUpstream, type Received } from "./support/recording-upstream.js";

/**
 * Chat settings on the shipped default catalog, seen where they act: what each provider receives, what the
 * routing chose, or a 400 naming what the gateway cannot apply before a provider is called.
 */
let gw: TestGateway;
let up: FakeUpstream;
let key: string;

const user = [{ role: "user", content: "Hi" }];
const weather = { type: "function", function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } } };

/** An answer in the wire format of the provider the path belongs to. */
function reply(r: Received) {
  if (r.path.startsWith("/anthropic/")) {
    const message = { id: "msg_1", type: "message", role: "assistant", model: r.body.model, content: [{ type: "text", text: "hi" }], stop_reason: "end_turn", stop_sequence: null };
    return { json: { ...message, usage: { input_tokens: 5, output_tokens: 3 } } };
  }
  const choices = [{ index: 0, finish_reason: "stop", message: { role: "assistant", content: "hi" } }];
  return { json: { id: "up-1", object: "chat.completion", created: 1, model: r.body.model, choices, usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 } } };
}

beforeAll(async () => {
  up = await startFakeUpstream();
  up.answer(reply);
  gw = await startTestGateway({
    SWITCHYARD_CONFIG: fileURLToPath(new URL("../services/catalog/default-catalog.yaml", import.meta.url)),
    OPENAI_API_KEY: "sk-openai",
    OPENAI_BASE_URL: `${up.origin}/openai/v1`,
    ANTHROPIC_API_KEY: "sk-ant",
    ANTHROPIC_BASE_URL: `${up.origin}/anthropic/v1`,
    XAI_API_KEY: "sk-xai",
    XAI_BASE_URL: `${up.origin}/xai/v1`,
    WEB_SEARCH_URL: "http://127.0.0.1:9/search",
  });
  key = String((await gw.call("POST", "/keys", { body: { name: "settings" } })).body.key);
});
afterAll(async () => {
  await gw?.stop();
  await up?.stop();
});

const chat = (body: Record<string, unknown>, headers: Record<string, string> = {}) => gw.call("POST", "/chat/completions", { key, body, headers });
const metadata = { "X-OpenRouter-Metadata": "enabled" };
const summaryOf = (body: Record<string, unknown>) => String((body.openrouter_metadata as { summary?: string } | undefined)?.summary);

/**
 * Sends `body`, expects a 400 saying `message` and that no provider was called. An adapter's refusal is
 * told as the provider's (`metadata.provider_message`), so the next model of `models` can still serve.
 */
async function refused(body: Record<string, unknown>, message: RegExp) {
  const before = up.requests.length;
  const r = await chat(body);
  expect(r.status, JSON.stringify(r.body)).toBe(400);
  const error = r.body.error as { message: string; metadata?: { provider_message?: string } };
  expect(error.metadata?.provider_message ?? error.message).toMatch(message);
  expect(up.requests.length).toBe(before);
}

describe("reasoning on OpenAI's own Chat Completions", () => {
  it("sends reasoning_effort alone, in OpenAI's values", async () => {
    expect((await chat({ model: "openai/gpt-5", messages: user, reasoning: { effort: "high" } })).status).toBe(200);
    expect(up.last().body).toMatchObject({ model: "gpt-5", reasoning_effort: "high" });
    expect(up.last().body).not.toHaveProperty("reasoning");

    await chat({ model: "openai/gpt-5", messages: user, reasoning_effort: "minimal" });
    expect(up.last().body.reasoning_effort).toBe("minimal");
  });

  it("works the effort out of a reasoning budget, and turns reasoning off when asked", async () => {
    // 2,000 of 10,000 output tokens is low's share (about 20%, as OpenRouter documents the efforts).
    await chat({ model: "openai/gpt-5", messages: user, max_completion_tokens: 10_000, reasoning: { max_tokens: 2000 } });
    expect(up.last().body).toMatchObject({ reasoning_effort: "low", max_completion_tokens: 10_000 });
    expect(up.last().body).not.toHaveProperty("reasoning");
    await chat({ model: "openai/gpt-5", messages: user, max_completion_tokens: 10_000, reasoning: { max_tokens: 8000 } });
    expect(up.last().body.reasoning_effort).toBe("high");

    await chat({ model: "openai/gpt-5", messages: user, reasoning: { enabled: false } });
    expect(up.last().body.reasoning_effort).toBe("none");
    expect(up.last().body).not.toHaveProperty("reasoning");
  });

  it("refuses an effort OpenAI does not take", async () => {
    await refused({ model: "openai/gpt-5", messages: user, reasoning_effort: "max" }, /reasoning effort "max".*none, minimal, low, medium, high, xhigh/);
    await refused({ model: "openai/gpt-5", messages: user, reasoning: { effort: "max" } }, /"max"/);
  });

  it("leaves OpenAI-compatible servers the reasoning object beside reasoning_effort", async () => {
    expect((await chat({ model: "x-ai/grok-3-mini", messages: user, reasoning: { effort: "high" }, max_tokens: 100 })).status).toBe(200);
    expect(up.last().path).toMatch(/^\/xai\//);
    expect(up.last().body).toMatchObject({ reasoning: { effort: "high" }, reasoning_effort: "high", max_tokens: 100 });
  });
});

describe("the output limit on OpenAI's own Chat Completions", () => {
  it("goes as max_completion_tokens, which every current OpenAI chat model takes", async () => {
    expect((await chat({ model: "openai/o3-mini", messages: user, max_tokens: 100 })).status).toBe(200);
    expect(up.last().body).toMatchObject({ model: "o3-mini", max_completion_tokens: 100 });
    expect(up.last().body).not.toHaveProperty("max_tokens");

    await chat({ model: "openai/gpt-4o", messages: user, max_tokens: 50, max_completion_tokens: 70 });
    expect(up.last().body.max_completion_tokens).toBe(70);
    expect(up.last().body).not.toHaveProperty("max_tokens");
  });
});

describe("the end user's ids", () => {
  it("reach the provider only as the workspace's hash, safety_identifier as user is", async () => {
    expect((await chat({ model: "openai/gpt-4o", messages: user, user: "alice", safety_identifier: "alice" })).status).toBe(200);
    const sent = up.last().body;
    expect(sent.safety_identifier).toBe(sent.user);
    expect(JSON.stringify(sent)).not.toContain("alice");
  });
});

describe("Anthropic's thinking budget", () => {
  const claude = "anthropic/claude-sonnet-4.5";

  it("is a share of max_tokens for an effort, at least 1024 and below max_tokens", async () => {
    await chat({ model: claude, messages: user, max_tokens: 4000, reasoning: { effort: "high" } });
    expect(up.last().body).toMatchObject({ max_tokens: 4000, thinking: { type: "enabled", budget_tokens: 3200 } });
    await chat({ model: claude, messages: user, max_tokens: 2000, reasoning: { effort: "low" } });
    expect(up.last().body).toMatchObject({ max_tokens: 2000, thinking: { type: "enabled", budget_tokens: 1024 } });
    await chat({ model: claude, messages: user, max_tokens: 4000, reasoning: { max_tokens: 3999 } });
    expect(up.last().body.thinking).toEqual({ type: "enabled", budget_tokens: 3999 });
  });

  it("is off for a budget of 0 or enabled: false, and sampling then goes as asked", async () => {
    await chat({ model: claude, messages: user, max_tokens: 4000, temperature: 0.5, reasoning: { max_tokens: 0 } });
    expect(up.last().body).not.toHaveProperty("thinking");
    expect(up.last().body.temperature).toBe(0.5);
    await chat({ model: claude, messages: user, max_tokens: 4000, reasoning: { enabled: false, max_tokens: 2000 } });
    expect(up.last().body).not.toHaveProperty("thinking");
  });

  it("refuses a budget Anthropic cannot take, naming what it requires", async () => {
    await refused({ model: claude, messages: user, max_tokens: 500, reasoning: { effort: "high" } }, /max_tokens above 1024/);
    await refused({ model: claude, messages: user, max_tokens: 1024, reasoning: { max_tokens: 1024 } }, /below max_tokens \(1024\)/);
    await refused({ model: claude, messages: user, max_tokens: 4000, reasoning: { max_tokens: 500 } }, /at least 1024/);
  });

  it("leaves the request to the next model of models when Anthropic cannot take it", async () => {
    const r = await chat({ models: [claude, "openai/gpt-4o"], messages: user, max_tokens: 500, reasoning: { effort: "high" } });
    expect(r.status).toBe(200);
    expect(r.body.model).toBe("openai/gpt-4o");
    expect(up.last().path).toMatch(/^\/openai\//);
  });
});

describe("provider.require_parameters", () => {
  it("counts max_completion_tokens as max_tokens and reasoning_effort as reasoning", async () => {
    const require = { require_parameters: true };
    const one = await chat({ model: "openai/gpt-4o", messages: user, max_completion_tokens: 50, provider: require });
    expect(one.status, JSON.stringify(one.body)).toBe(200);
    const two = await chat({ model: "openai/gpt-5", messages: user, reasoning_effort: "low", provider: require });
    expect(two.status, JSON.stringify(two.body)).toBe(200);
    expect(up.last().body.reasoning_effort).toBe("low");
    // An endpoint that does not take reasoning is still left out.
    const three = await chat({ model: "openai/gpt-4o", messages: user, reasoning_effort: "low", provider: require });
    expect(three.status).toBe(404);
    expect(three.body.error?.message).toContain("does not support reasoning_effort");
  });
});

describe("unsupported parameters in the summary", () => {
  it("names reasoning alone when only reasoning was sent", async () => {
    const r = await chat({ model: "openai/gpt-4o", messages: user, reasoning: { effort: "low" } }, metadata);
    expect(r.status).toBe(200);
    expect(up.last().body).not.toHaveProperty("reasoning_effort");
    expect(summaryOf(r.body)).toMatch(/unsupported parameters dropped: reasoning$/);
    const both = await chat({ model: "openai/gpt-4o", messages: user, reasoning_effort: "low" }, metadata);
    expect(summaryOf(both.body)).toMatch(/unsupported parameters dropped: reasoning_effort$/);
  });
});

describe("parallel_tool_calls", () => {
  it("reaches OpenAI as sent, also under require_parameters", async () => {
    const r = await chat({ model: "openai/gpt-4o", messages: user, tools: [weather], parallel_tool_calls: false }, metadata);
    expect(r.status).toBe(200);
    expect(up.last().body.parallel_tool_calls).toBe(false);
    expect(summaryOf(r.body)).not.toContain("dropped");
    const required = await chat({ model: "openai/gpt-4o", messages: user, tools: [weather], parallel_tool_calls: false, provider: { require_parameters: true } });
    expect(required.status, JSON.stringify(required.body)).toBe(200);
  });

  it("reaches Anthropic as disable_parallel_tool_use", async () => {
    await chat({ model: "anthropic/claude-sonnet-4.5", messages: user, tools: [weather], tool_choice: "auto", parallel_tool_calls: false });
    expect(up.last().body.tool_choice).toEqual({ type: "auto", disable_parallel_tool_use: true });
  });
});

describe("route", () => {
  const both = { models: ["openai/gpt-4o", "openai/gpt-4o-mini"], messages: user };

  it("sorts the endpoints of every model as one list for sort, as provider.sort's partition none", async () => {
    const sorted = await chat({ ...both, provider: { sort: "price" }, route: "sort" });
    expect(sorted.status).toBe(200);
    expect(up.last().body.model).toBe("gpt-4o-mini");
    await refused({ ...both, provider: { sort: { by: "price", partition: "model" } }, route: "sort" }, /route: sort \(partition none\) conflicts with provider\.sort\.partition model/);
  });

  it("keeps each model's endpoints together for fallback", async () => {
    // `fallback` is the default partition by model: the first model's endpoint serves.
    const fallback = await chat({ ...both, provider: { sort: "price" }, route: "fallback" });
    expect(fallback.status).toBe(200);
    expect(up.last().body.model).toBe("gpt-4o");
    expect((await chat({ model: "openai/gpt-4o", messages: user, route: "sort" })).status).toBe(200);
    expect((await chat({ ...both, provider: { sort: { by: "price", partition: "none" } }, route: "sort" })).status).toBe(200);
    expect(up.last().body.model).toBe("gpt-4o-mini");
  });
});

describe("plugins and transforms", () => {
  it("answers the web plugin with what the gateway offers instead", async () => {
    await refused({ model: "openai/gpt-4o", messages: user, plugins: [{ id: "web" }] }, /openrouter:web_search/);
    const r = await chat({ model: "openai/gpt-4o", messages: user, plugins: [{ id: "web" }] });
    expect(r.body.error?.message).not.toContain("none is configured");
  });

  it("refuses transforms the gateway cannot apply, naming them, and applies middle-out", async () => {
    await refused({ model: "openai/gpt-4o", messages: user, transforms: "middle-out" }, /transforms: must be an array.*middle-out/);
    await refused({ model: "openai/gpt-4o", messages: user, transforms: ["middle-out", "bogus"] }, /transforms: unknown transform bogus/);
    expect((await chat({ model: "openai/gpt-4o", messages: user, transforms: ["middle-out"] })).status).toBe(200);
    expect((await chat({ model: "openai/gpt-4o", messages: user, transforms: [] })).status).toBe(200);
  });
});
