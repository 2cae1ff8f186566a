import Anthropic from "@anthropic-ai/sdk";
import type { MessageCountTokensParams, MessageParam } from "@anthropic-ai/sdk/resources/messages";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "./support/eventually.js";
import { cachedPrefixTokens, fakeUsage, greeting, tooLongMessage } from "./support/fake-anthropic.js";
import { bootstrapKey } from "./support/gateway.js";
import { endpointKey, pricing, startMessagesGateway, type MessagesFixture } from "./support/messages-fixture.js";

let fx: MessagesFixture;
let client: Anthropic;

beforeAll(async () => {
  fx = await startMessagesGateway();
  client = fx.client;
});
afterAll(async () => {
  await fx?.stop();
});

const hi: MessageParam[] = [{ role: "user", content: "Hi" }];
const sdk = (options: { apiKey?: string | null; authToken?: string | null }) => new Anthropic({ baseURL: `${fx.gw.baseUrl}/api`, maxRetries: 0, ...options });
/** What a call throws (or undefined when it succeeds). */
const thrown = (call: Promise<unknown>) => call.then(() => undefined, (e: unknown) => e);
/** The body of a Messages call sent as-is, and the error body the gateway answers. */
async function post(path: string, body: unknown, headers: Record<string, string>) {
  const res = await fetch(`${fx.gw.apiUrl}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as { type?: string; error?: { type: string; message: string } } };
}

describe("errors on /messages, in Anthropic's shape and the SDK's classes", () => {
  it("refuses an invalid body with 400 invalid_request_error: max_tokens missing, a field Anthropic has not", async () => {
    const before = fx.claude.requests.length;
    const missing = await thrown(client.messages.create({ model: "anthropic/text", messages: hi } as unknown as Anthropic.MessageCreateParamsNonStreaming));
    expect(missing).toBeInstanceOf(Anthropic.BadRequestError);
    expect(missing).toMatchObject({ status: 400, type: "invalid_request_error", apiMessage: expect.stringMatching(/max_tokens/) });
    const unknown = await thrown(client.messages.create({ model: "anthropic/text", max_tokens: 10, messages: hi, frequency_penalty: 1 } as Anthropic.MessageCreateParamsNonStreaming));
    expect(unknown).toBeInstanceOf(Anthropic.BadRequestError);
    expect(unknown).toMatchObject({ type: "invalid_request_error", apiMessage: expect.stringMatching(/frequency_penalty/) });
    const raw = await post("/messages", { model: "anthropic/text", max_tokens: 10, messages: [] }, { "x-api-key": fx.key });
    expect(raw).toEqual({ status: 400, body: { type: "error", error: { type: "invalid_request_error", message: expect.stringMatching(/messages/) } } });
    expect(fx.claude.requests).toHaveLength(before);
  });

  it("refuses a bad key with 401 authentication_error, whether in x-api-key or as a Bearer token", async () => {
    for (const client of [sdk({ apiKey: "sk-ant-not-a-key", authToken: null }), sdk({ apiKey: null, authToken: "sk-ant-not-a-key" })]) {
      const error = await thrown(client.messages.create({ model: "anthropic/text", max_tokens: 10, messages: hi }));
      expect(error).toBeInstanceOf(Anthropic.AuthenticationError);
      expect(error).toMatchObject({ status: 401, type: "authentication_error" });
    }
    const none = await post("/messages", { model: "anthropic/text", max_tokens: 10, messages: hi }, {});
    expect(none).toMatchObject({ status: 401, body: { type: "error", error: { type: "authentication_error" } } });
    // The right key as a Bearer token (Claude Code's ANTHROPIC_AUTH_TOKEN) works as x-api-key does.
    const bearer = await sdk({ apiKey: null, authToken: fx.key }).messages.create({ model: "anthropic/text", max_tokens: 10, messages: hi });
    expect(bearer.content).toEqual([{ type: "text", text: greeting }]);
  });

  it("refuses a management key with 403 permission_error", async () => {
    const error = await thrown(sdk({ apiKey: bootstrapKey }).messages.create({ model: "anthropic/text", max_tokens: 10, messages: hi }));
    expect(error).toBeInstanceOf(Anthropic.PermissionDeniedError);
    expect(error).toMatchObject({ status: 403, type: "permission_error" });
  });

  it("answers an unknown model with 404 not_found_error, Anthropic's own names included", async () => {
    for (const model of ["anthropic/nothing-here", "claude-opus-1-0-20990101"]) {
      const error = await thrown(client.messages.create({ model, max_tokens: 10, messages: hi }));
      expect(error, model).toBeInstanceOf(Anthropic.NotFoundError);
      expect(error, model).toMatchObject({ status: 404, type: "not_found_error" });
    }
  });

  it("passes an upstream 529 on as Anthropic's overloaded_error, buffered and streamed", async () => {
    const params = { model: "anthropic/overloaded", max_tokens: 10, messages: hi };
    // One call at a time: a second call started beside the first would reject before it is awaited.
    for (const call of [() => client.messages.create(params), () => client.messages.stream(params).finalMessage()]) {
      const error = await thrown(call());
      expect(error).toBeInstanceOf(Anthropic.OverloadedError);
      expect(error).toMatchObject({ status: 529, type: "overloaded_error" });
    }
    expect(fx.claude.requests.at(-1)!.body.model).toBe("overloaded");
  });

  it("passes a provider's 4xx on with the provider's own message, buffered and streamed, as chat shows it in provider_message", async () => {
    // Claude Code reads Anthropic's words to compact a conversation that outgrew the context.
    const params = { model: "anthropic/too-long", max_tokens: 10, messages: hi };
    for (const call of [() => client.messages.create(params), () => client.messages.stream(params).finalMessage()]) {
      const error = await thrown(call());
      expect(error).toBeInstanceOf(Anthropic.BadRequestError);
      expect(error).toMatchObject({ status: 400, type: "invalid_request_error", apiMessage: tooLongMessage });
    }
    const chat = await fx.gw.call("POST", "/chat/completions", { key: fx.key, body: { model: "anthropic/too-long", max_tokens: 10, messages: hi } });
    const chatError = chat.body.error as { message: string; metadata?: { provider_message?: string } } | undefined;
    expect(chat.status).toBe(400);
    expect(chatError?.message).toBe("Provider rejected the request");
    expect(chatError?.metadata?.provider_message).toContain(tooLongMessage);
    // An OpenAI-compatible endpoint's own error, read from its envelope the same way.
    const other = await post("/messages", { model: "openai/rejects", max_tokens: 10, messages: hi }, { "x-api-key": fx.key });
    expect(other).toEqual({ status: 400, body: { type: "error", error: { type: "invalid_request_error", message: "context too long" } } });
  });
});

describe("messages.countTokens", () => {
  it("is counted by the Anthropic endpoint, sent the client's body without the gateway's fields", async () => {
    const system = [{ type: "text" as const, text: "Count carefully.", cache_control: { type: "ephemeral" as const } }];
    const tools = [{ name: "lookup", description: "Looks things up", input_schema: { type: "object" as const, properties: { q: { type: "string" } } } }];
    const params = { model: "anthropic/text", system, tools, messages: hi, provider: { allow_fallbacks: false } } as MessageCountTokensParams;
    const before = fx.claude.requests.length;
    const counted = await client.messages.countTokens(params, { headers: { "anthropic-beta": "token-counting-2024-11-01" } });
    expect(counted).toEqual({ input_tokens: fx.claude.countedTokens });
    expect(fx.claude.requests).toHaveLength(before + 1);
    const sent = fx.claude.requests.at(-1)!;
    expect(sent.path).toBe("/v1/messages/count_tokens");
    expect(sent.body).toEqual({ model: "text", system, tools, messages: hi });
    expect(sent.raw).toContain(`"system":${JSON.stringify(system)}`);
    expect(sent.headers).toMatchObject({ apiKey: endpointKey, beta: "token-counting-2024-11-01" });
  });

  it("counts a preset's system prompt as /messages sends it, whether Anthropic counts or the gateway estimates", async () => {
    const system = "Count the preset's words too.";
    for (const [slug, model] of [
      ["csys", "anthropic/text"],
      ["csys-compat", "openai/compat"],
    ]) {
      const saved = await fx.gw.call("POST", "/presets", { body: { slug, model, system_prompt: system } });
      expect(saved.status, slug).toBe(200);
    }
    await client.messages.create({ model: "@preset/csys", max_tokens: 10, messages: hi });
    const answered = fx.claude.requests.at(-1)!;
    expect(answered).toMatchObject({ path: "/v1/messages", body: { system } });
    await client.messages.countTokens({ model: "@preset/csys", messages: hi });
    const counted = fx.claude.requests.at(-1)!;
    expect(counted.path).toBe("/v1/messages/count_tokens");
    expect(counted.body).toEqual({ model: "text", system: answered.body.system, messages: hi });
    // The client's own system prompt wins over the preset's, as on /messages.
    await client.messages.countTokens({ model: "@preset/csys", system: "Mine.", messages: hi });
    expect(fx.claude.requests.at(-1)!.body).toEqual({ model: "text", system: "Mine.", messages: hi });
    // The preset's 29 characters, a line break and "Hi": 32 characters, 8 tokens at four a token.
    expect(await client.messages.countTokens({ model: "@preset/csys-compat", messages: hi })).toEqual({ input_tokens: 8, estimated: true });
  });

  it("is an estimate that says so on another endpoint, which is never called", async () => {
    const image = { type: "image" as const, source: { type: "base64" as const, media_type: "image/png" as const, data: "iVBORw0KGgo=" } };
    const before = fx.compat.requests.length;
    const counted = await client.messages.countTokens({ model: "openai/compat", system: "Be brief.", messages: [{ role: "user", content: [image, { type: "text", text: "What is this?" }] }] });
    // "Be brief.\nWhat is this?" is 23 characters, 6 tokens at four a token; an image counts 1600.
    expect(counted).toEqual({ input_tokens: 6 + 1600, estimated: true });
    expect(fx.compat.requests).toHaveLength(before);
  });
});

describe("records of /messages", () => {
  const generation = async (id: string) => {
    let data: Record<string, unknown> | undefined;
    await eventually(async () => {
      const res = await fx.gw.call("GET", `/generation?id=${id}`, { key: fx.key });
      data = res.status === 200 ? (res.body.data as Record<string, unknown>) : undefined;
      return data !== undefined;
    }, 5000);
    return data!;
  };
  // Per-token prices as numbers, to price what the fake reports.
  const price = Object.fromEntries(Object.entries(pricing).map(([k, v]) => [k, Number(v)])) as Record<keyof typeof pricing, number>;
  const uncached = fakeUsage.input * price.prompt + fakeUsage.output * price.completion;

  it("keeps each message's generation under its id, with its tokens and cache counts, priced alike buffered and streamed", async () => {
    // Long enough to be cached for real (the hold is sized by the prompt, and the fake reports 2048 cached tokens).
    const system = [{ type: "text" as const, text: `A prompt only this test caches. ${"Keep it short. ".repeat(600)}`, cache_control: { type: "ephemeral" as const } }];
    const params = { model: "anthropic/text", max_tokens: 100, system, messages: hi };
    const { data: written, response } = await client.messages.create(params).withResponse();
    expect(response.headers.get("x-generation-id")).toBe(written.id);
    expect(response.headers.get("request-id")).toBe(written.id);
    expect(written.usage).toMatchObject({ cache_creation_input_tokens: cachedPrefixTokens, cache_read_input_tokens: 0 });
    const first = await generation(written.id);
    expect(first).toMatchObject({ id: written.id, model: "anthropic/text", provider_name: "claude", streamed: false, tokens_prompt: fakeUsage.input + cachedPrefixTokens, tokens_completion: fakeUsage.output, native_tokens_cached: 0 });
    expect(first.total_cost).toBeCloseTo(uncached + cachedPrefixTokens * price.input_cache_write, 12);

    const read = await client.messages.create(params);
    expect(read.usage).toMatchObject({ input_tokens: fakeUsage.input, cache_creation_input_tokens: 0, cache_read_input_tokens: cachedPrefixTokens });
    const second = await generation(read.id);
    expect(second).toMatchObject({ tokens_prompt: fakeUsage.input + cachedPrefixTokens, native_tokens_cached: cachedPrefixTokens });
    expect(second.total_cost).toBeCloseTo(uncached + cachedPrefixTokens * price.input_cache_read, 12);

    const stream = client.messages.stream(params);
    const message = await stream.finalMessage();
    expect(stream.response?.headers.get("x-generation-id")).toBe(message.id);
    expect(message.usage).toMatchObject({ input_tokens: fakeUsage.input, output_tokens: fakeUsage.output, cache_creation_input_tokens: 0, cache_read_input_tokens: cachedPrefixTokens });
    const third = await generation(message.id);
    expect(third).toMatchObject({ streamed: true, tokens_prompt: second.tokens_prompt, tokens_completion: second.tokens_completion, native_tokens_cached: cachedPrefixTokens });
    expect(third.total_cost).toBe(second.total_cost);
  });

  it("says a provider's rejection in its own words after keep-alive comments began the stream", async () => {
    const stream = client.messages.stream({ model: "anthropic/late-too-long", max_tokens: 10, messages: hi });
    const error = await thrown(stream.finalMessage());
    expect(error).toBeInstanceOf(Anthropic.APIError);
    expect((error as InstanceType<typeof Anthropic.APIError>).message).toContain(tooLongMessage);
  });

  it("records a stream the client aborted as cancelled", async () => {
    const stream = client.messages.stream({ model: "anthropic/slow", max_tokens: 100, messages: hi });
    const firstWords = new Promise<void>((resolve) => stream.once("text", () => resolve()));
    const outcome = thrown(stream.finalMessage());
    await firstWords;
    const id = stream.request_id!;
    expect(id).toMatch(/\S/);
    stream.abort();
    expect(await outcome).toBeInstanceOf(Anthropic.APIUserAbortError);
    expect(await generation(id)).toMatchObject({ id, cancelled: true, streamed: true });
  });
});
