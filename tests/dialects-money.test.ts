import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { eventually } from "./support/eventually.js";
import { overUsage, startFakeProvider, type FakeProvider } from "./support/fake-provider.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";

/**
 * Money and records on every dialect through the whole gateway: chat completions, the Responses API and the
 * legacy completions share one core, so each is charged, limited, filtered and recorded as chat is.
 */
type Dialect = "chat" | "responses" | "completions";
type Json = Record<string, unknown>;
const dialects: Dialect[] = ["chat", "responses", "completions"];
const paths: Record<Dialect, string> = { chat: "/chat/completions", responses: "/responses", completions: "/completions" };

let gw: TestGateway;
let alpha: FakeProvider;

// The fake reports 12 prompt tokens and 5 completion tokens; at these prices that is $0.000022.
const tokenPricing = { prompt: "0.000001", completion: "0.000002" };
const tokenCost = 12 * 0.000001 + 5 * 0.000002;
// A free prompt and $0.00001 per completion token: a `max_tokens` of 100 holds exactly $0.001.
const perCompletionToken = { prompt: "0", completion: "0.00001" };
const model = (id: string, upstream: string, pricing: Record<string, string>) => ({
  id,
  name: id,
  context_length: 8000,
  endpoints: [{ provider: "alpha", upstream_model: upstream, pricing: { prompt: "0", completion: "0", ...pricing }, max_completion_tokens: 1000 }],
});

beforeAll(async () => {
  alpha = await startFakeProvider("alpha");
  const catalog = {
    providers: [{ slug: "alpha", name: "Alpha", adapter: "openai-compatible", base_url: alpha.baseUrl, requires_api_key: false }],
    models: [
      model("dm/tokens", "ok", tokenPricing),
      // A flat price per request: the worst case held is exactly the charge.
      model("dm/cent", "cent", { request: "0.01" }),
      model("dm/over", "over-usage", perCompletionToken),
    ],
  };
  gw = await startTestGateway(await catalogEnv(catalog));
});
afterAll(async () => {
  await gw?.stop();
  await alpha?.stop();
});

async function newKey(settings: Json = {}) {
  const created = await gw.call("POST", "/keys", { body: { name: "dialects", ...settings } });
  expect(created.status).toBe(201);
  return { key: String(created.body.key), hash: String(created.body.data?.hash) };
}

/** A request of `dialect` for `model` saying `text`. */
function bodyOf(dialect: Dialect, modelId: string, text = "Say hello", extra: Json = {}): Json {
  const said = dialect === "chat" ? { messages: [{ role: "user", content: text }] } : dialect === "responses" ? { input: text } : { prompt: text };
  return { model: modelId, ...said, ...extra };
}

/** Priced usage in one shape whatever the dialect named its fields. */
interface Usage {
  cost: number;
  upstreamCost: number;
  prompt: number;
  completion: number;
}

interface Answer {
  status: number;
  /** `X-Generation-Id`. */
  generationId: string | null;
  /** The id the answer itself gives (the response's, the completion's, every chunk's). */
  ids: string[];
  body: Json;
  /** A stream's `data:` frames, parsed; empty when buffered. */
  frames: Json[];
  usage: Usage | undefined;
}

/** A stream's `data:` payloads as JSON, comments and `[DONE]` left out. */
function framesOf(text: string): Json[] {
  const frames: Json[] = [];
  for (const block of text.split("\n\n")) {
    const data = block
      .split("\n")
      .filter((line) => line.startsWith("data: "))
      .map((line) => line.slice(6))
      .join("\n");
    if (data && data !== "[DONE]") frames.push(JSON.parse(data) as Json);
  }
  return frames;
}

function usageOf(dialect: Dialect, raw: unknown): Usage | undefined {
  if (!raw || typeof raw !== "object") return undefined;
  const u = raw as Json & { cost_details?: Json };
  const responses = dialect === "responses";
  return {
    cost: Number(u.cost),
    upstreamCost: Number(u.cost_details?.upstream_inference_cost),
    prompt: Number(responses ? u.input_tokens : u.prompt_tokens),
    completion: Number(responses ? u.output_tokens : u.completion_tokens),
  };
}

/** One request of `dialect`, buffered or streamed, read whole. */
async function ask(key: string, dialect: Dialect, body: Json, stream: boolean): Promise<Answer> {
  const res = await fetch(`${gw.apiUrl}${paths[dialect]}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ ...body, stream }),
  });
  const text = await res.text();
  const streamed = (res.headers.get("content-type") ?? "").startsWith("text/event-stream");
  const frames = streamed ? framesOf(text) : [];
  const parsed = streamed || !text ? {} : (JSON.parse(text) as Json);
  const completed = frames.find((f) => f.type === "response.completed")?.response as Json | undefined;
  const rawUsage = !streamed ? parsed.usage : dialect === "responses" ? completed?.usage : frames.findLast((f) => f.usage)?.usage;
  const ids = streamed ? frames.map((f) => String(dialect === "responses" ? (f.response as Json | undefined)?.id : f.id)).filter((id) => id !== "undefined") : [String(parsed.id)];
  return { status: res.status, generationId: res.headers.get("x-generation-id"), ids, body: parsed, frames, usage: usageOf(dialect, rawUsage) };
}

/** The stored generation, once its record is committed. */
async function generation(id: string, key: string): Promise<Json> {
  await eventually(async () => (await gw.call("GET", `/generation?id=${id}`, { key })).status === 200, 5000);
  return (await gw.call("GET", `/generation?id=${id}`, { key })).body.data as Json;
}

const keyUsage = async (hash: string) => Number((await gw.call("GET", `/keys/${hash}`)).body.data?.usage ?? 0);
/** Settled usage travels by event; it must reach `usd` and be exactly that. */
const usageReaches = (hash: string, usd: number) => eventually(async () => (await keyUsage(hash)) === Number(usd.toFixed(12)), 10_000);
const upstreamCalls = (upstream: string) => alpha.requests.filter((r) => r.body.model === upstream).length;
const sum = (values: number[]) => Number(values.reduce((a, b) => a + b, 0).toFixed(12));

describe("what each dialect is charged", () => {
  it.each(dialects)("charges %s the same buffered and streamed, as the records and the key's usage agree", async (dialect) => {
    const { key, hash } = await newKey();
    const buffered = await ask(key, dialect, bodyOf(dialect, "dm/tokens"), false);
    const streamed = await ask(key, dialect, bodyOf(dialect, "dm/tokens"), true);
    for (const answer of [buffered, streamed]) {
      expect(answer.status).toBe(200);
      // The same upstream usage costs the same on every dialect.
      expect(answer.usage).toMatchObject({ prompt: 12, completion: 5 });
      expect(answer.usage?.cost).toBeCloseTo(tokenCost, 12);
      expect(answer.ids.length).toBeGreaterThan(0);
      for (const id of answer.ids) expect(id).toBe(answer.generationId);
    }
    expect(streamed.usage?.cost).toBe(buffered.usage?.cost);

    const records = [await generation(buffered.generationId!, key), await generation(streamed.generationId!, key)];
    for (const [i, record] of records.entries()) {
      expect(record).toMatchObject({ model: "dm/tokens", provider_name: "alpha", streamed: i === 1, tokens_prompt: 12, tokens_completion: 5, cancelled: false });
      expect(record.total_cost).toBe(buffered.usage?.cost);
    }
    await usageReaches(hash, 2 * tokenCost);
  });

  it.each(dialects)("caps %s at the hold when the provider reports more than max tokens allowed, buffered and streamed", async (dialect) => {
    const { key, hash } = await newKey({ limit: 0.01 });
    const limit = dialect === "responses" ? { max_output_tokens: 100 } : { max_tokens: 100 };
    const answers = [await ask(key, dialect, bodyOf(dialect, "dm/over", "Say hello", limit), false), await ask(key, dialect, bodyOf(dialect, "dm/over", "Say hello", limit), true)];
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      expect(answer.usage).toMatchObject({ completion: overUsage.completion_tokens, cost: 0.001 });
      expect(answer.usage?.upstreamCost).toBeCloseTo(overUsage.completion_tokens * 0.00001, 12);
      expect((await generation(answer.generationId!, key)).total_cost).toBe(0.001);
    }
    await usageReaches(hash, 0.002);
  });

  it("holds a legacy completion's suffix as prompt: a key that cannot pay for it is refused with 402", async () => {
    // The suffix is 20,000 bytes of prompt at $0.000001 a token: about $0.02, beyond the $0.001 limit.
    const { key } = await newKey({ limit: 0.001 });
    const filler = "x ".repeat(10_000);
    expect((await ask(key, "completions", bodyOf("completions", "dm/tokens", filler, { max_tokens: 1 }), false)).status).toBe(402);
    const before = alpha.requests.length;
    const answer = await ask(key, "completions", bodyOf("completions", "dm/tokens", "Dear", { suffix: filler, max_tokens: 1 }), false);
    expect(answer.status).toBe(402);
    expect(alpha.requests.length).toBe(before);
  });
});

describe("records and headers", () => {
  it("gives X-Generation-Id naming the answer's own id on every dialect, buffered and streamed, through the openai client", async () => {
    const { key } = await newKey();
    const openai = new OpenAI({ apiKey: key, baseURL: gw.apiUrl, maxRetries: 0 });
    const seen: Array<{ dialect: Dialect; header: string | null; id: string; streamed: boolean }> = [];

    const chat = await openai.chat.completions.create({ model: "dm/tokens", messages: [{ role: "user", content: "Say hello" }] }).withResponse();
    seen.push({ dialect: "chat", header: chat.response.headers.get("x-generation-id"), id: chat.data.id, streamed: false });
    const chatStream = await openai.chat.completions.create({ model: "dm/tokens", messages: [{ role: "user", content: "Say hello" }], stream: true }).withResponse();
    let chatId = "";
    for await (const chunk of chatStream.data) chatId = chunk.id;
    seen.push({ dialect: "chat", header: chatStream.response.headers.get("x-generation-id"), id: chatId, streamed: true });

    const response = await openai.responses.create({ model: "dm/tokens", input: "Say hello" }).withResponse();
    expect(response.data.output_text).toBe("Hello from alpha");
    seen.push({ dialect: "responses", header: response.response.headers.get("x-generation-id"), id: response.data.id, streamed: false });
    const responseStream = await openai.responses.create({ model: "dm/tokens", input: "Say hello", stream: true }).withResponse();
    let responseId = "";
    for await (const event of responseStream.data) if (event.type === "response.completed") responseId = event.response.id;
    seen.push({ dialect: "responses", header: responseStream.response.headers.get("x-generation-id"), id: responseId, streamed: true });

    const completion = await openai.completions.create({ model: "dm/tokens", prompt: "Say hello" }).withResponse();
    seen.push({ dialect: "completions", header: completion.response.headers.get("x-generation-id"), id: completion.data.id, streamed: false });
    const completionStream = await openai.completions.create({ model: "dm/tokens", prompt: "Say hello", stream: true }).withResponse();
    let completionId = "";
    for await (const chunk of completionStream.data) completionId = chunk.id;
    seen.push({ dialect: "completions", header: completionStream.response.headers.get("x-generation-id"), id: completionId, streamed: true });

    for (const { dialect, header, id, streamed } of seen) {
      expect(header, `${dialect} streamed=${streamed}`).toMatch(/^gen-/);
      expect(id, `${dialect} streamed=${streamed}`).toBe(header);
      expect(await generation(header!, key), `${dialect} streamed=${streamed}`).toMatchObject({ id: header, model: "dm/tokens", provider_name: "alpha", streamed, total_cost: tokenCost });
    }
    expect(new Set(seen.map((s) => s.header)).size).toBe(seen.length);
  });
});

describe("key limits on /responses", () => {
  it("lets 40 concurrent /responses requests (half streamed) charge at most the key's limit, refusing the rest with 402 or 403", async () => {
    const { key, hash } = await newKey({ limit: 0.1 });
    const before = upstreamCalls("cent");
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => ask(key, "responses", bodyOf("responses", "dm/cent"), i % 2 === 1)));
    const served = answers.filter((a) => a.status === 200);
    const refused = answers.filter((a) => a.status === 402 || a.status === 403);
    expect(served.length + refused.length).toBe(40);
    // Each worst case is exactly its $0.01 charge: ten fit the $0.10 limit.
    expect(served).toHaveLength(10);
    expect(upstreamCalls("cent") - before).toBe(10);
    for (const answer of served) expect(answer.usage?.cost).toBe(0.01);
    expect(sum(served.map((a) => a.usage?.cost ?? 0))).toBeLessThanOrEqual(0.1);

    await usageReaches(hash, 0.1);
    const own = (await gw.call("GET", "/key", { key })).body.data as Json;
    expect(own).toMatchObject({ usage: 0.1, limit: 0.1, limit_remaining: 0 });
    const exhausted = await ask(key, "responses", bodyOf("responses", "dm/cent"), false);
    expect(exhausted.status).toBe(403);
    expect((exhausted.body.error as Json | undefined)?.message).toBe("Key limit exceeded");
  });
});

/** A new inference key under a new guardrail made from `settings`. */
async function guardedKey(settings: Json) {
  const { key, hash } = await newKey();
  const guardrail = await gw.call("POST", "/guardrails", { body: { name: "dialects", ...settings } });
  expect(guardrail.status).toBe(201);
  const id = String(guardrail.body.data?.id);
  expect((await gw.call("POST", `/guardrails/${id}/assignments/keys`, { body: { key_hashes: [hash] } })).status).toBe(200);
  return { key, hash, id };
}

const email = "ada.lovelace@example.org";
const ssn = "123-45-6789";
/** What the provider was last sent as the prompt: the legacy route's prompt, or the chat messages' text. */
function lastPrompt(): string {
  const { body } = alpha.requests.at(-1)!;
  if (typeof body.prompt === "string") return body.prompt;
  return (body.messages as Array<{ content: unknown }>).map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content))).join("\n");
}

describe("guardrails on /responses and /completions", () => {
  it.each(["responses", "completions"] as const)("redacts an email in the %s prompt before the provider sees it, buffered and streamed, and records the finding", async (dialect) => {
    const { key, id } = await guardedKey({ content_filter_builtins: [{ slug: "email", action: "redact" }] });
    for (const stream of [false, true]) {
      const answer = await ask(key, dialect, bodyOf(dialect, "dm/tokens", `write to ${email} today`), stream);
      expect(answer.status).toBe(200);
      expect(alpha.requests.at(-1)!.path).toBe(dialect === "completions" ? "/v1/completions" : "/v1/chat/completions");
      expect(lastPrompt()).toBe("write to [EMAIL] today");
      const record = await generation(answer.generationId!, key);
      expect(record.content_filters).toEqual([{ guardrail_id: id, filter: "email", action: "redact", count: 1 }]);
    }
  });

  it("redacts the Responses instructions, which reach the provider as its system message", async () => {
    const { key } = await guardedKey({ content_filter_builtins: [{ slug: "email", action: "redact" }] });
    const answer = await ask(key, "responses", bodyOf("responses", "dm/tokens", "hi", { instructions: `Reply to ${email}.` }), false);
    expect(answer.status).toBe(200);
    expect(alpha.requests.at(-1)!.body.messages).toEqual([
      { role: "system", content: "Reply to [EMAIL]." },
      { role: "user", content: "hi" },
    ]);
  });

  it.each(["responses", "completions"] as const)("refuses a %s prompt a block filter matches with 403 before a provider is called, buffered and streamed", async (dialect) => {
    const { key, id } = await guardedKey({ content_filter_builtins: [{ slug: "ssn", action: "block" }] });
    const before = alpha.requests.length;
    for (const stream of [false, true]) {
      const answer = await ask(key, dialect, bodyOf(dialect, "dm/tokens", `my SSN is ${ssn}`), stream);
      expect(answer.status).toBe(403);
      const message = String((answer.body.error as Json | undefined)?.message);
      expect(message).toContain(id);
      expect(message).not.toContain(ssn);
    }
    expect(alpha.requests.length).toBe(before);
  });

  it("redacts a legacy completion's suffix, which reaches the provider beside the prompt", async () => {
    const { key } = await guardedKey({ content_filter_builtins: [{ slug: "email", action: "redact" }] });
    const answer = await ask(key, "completions", bodyOf("completions", "dm/tokens", "Dear", { suffix: `Regards, ${email}` }), false);
    expect(answer.status).toBe(200);
    expect(alpha.requests.at(-1)!.body).toMatchObject({ prompt: "Dear", suffix: "Regards, [EMAIL]" });
  });

  it("refuses a legacy completion whose suffix a block filter matches, before a provider is called", async () => {
    const { key } = await guardedKey({ content_filter_builtins: [{ slug: "ssn", action: "block" }] });
    const before = alpha.requests.length;
    const refused = await ask(key, "completions", bodyOf("completions", "dm/tokens", "Form", { suffix: `SSN: ${ssn}` }), false);
    expect(refused.status).toBe(403);
    expect(alpha.requests.length).toBe(before);
  });

  it("shares a guardrail's $0.05 budget across 20 concurrent /responses and /completions requests: five are served", async () => {
    const { key, hash, id } = await guardedKey({ limit_usd: 0.05, reset_interval: "daily" });
    const before = upstreamCalls("cent");
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => {
        const dialect = i % 2 ? "responses" : "completions";
        return ask(key, dialect, bodyOf(dialect, "dm/cent"), i % 4 >= 2);
      }),
    );
    const served = answers.filter((a) => a.status === 200);
    expect(served).toHaveLength(5);
    // Refused while the budget is held (402), or once its spend is settled (403, used up until it resets).
    const refused = answers.filter((a) => a.status === 402 || a.status === 403);
    expect(refused).toHaveLength(15);
    expect(String((refused[0]?.body.error as Json | undefined)?.message)).toContain(`guardrail ${id}`);
    expect(upstreamCalls("cent") - before).toBe(5);
    expect(sum(served.map((a) => a.usage?.cost ?? 0))).toBe(0.05);
    await usageReaches(hash, 0.05);
  });

  it("runs @preset/<slug> on /responses: its model, system prompt and parameters reach the provider, buffered and streamed", async () => {
    const saved = await gw.call("POST", "/presets/dialect-greeter/chat/completions", {
      body: { model: "dm/tokens", temperature: 0.1, messages: [{ role: "system", content: "You greet people." }] },
    });
    expect(saved.status).toBe(200);
    const presetId = String((await gw.call("GET", "/presets/dialect-greeter")).body.data?.id);
    const { key } = await newKey();
    for (const stream of [false, true]) {
      const answer = await ask(key, "responses", bodyOf("responses", "@preset/dialect-greeter", "hi"), stream);
      expect(answer.status).toBe(200);
      const sent = alpha.requests.at(-1)!.body;
      expect(sent).toMatchObject({ model: "ok", temperature: 0.1 });
      expect(sent.messages).toEqual([
        { role: "system", content: "You greet people." },
        { role: "user", content: "hi" },
      ]);
      const response = stream ? (answer.frames.find((f) => f.type === "response.completed")?.response as Json) : answer.body;
      expect(response).toMatchObject({ model: "dm/tokens", status: "completed" });
      expect(await generation(answer.generationId!, key)).toMatchObject({ model: "dm/tokens", preset_id: presetId, streamed: stream, total_cost: tokenCost });
    }
    // The request's own parameters win over the preset's.
    expect((await ask(key, "responses", bodyOf("responses", "@preset/dialect-greeter", "hi", { temperature: 0.7 }), false)).status).toBe(200);
    expect(alpha.requests.at(-1)!.body.temperature).toBe(0.7);
  });
});

describe("who may call, and how often", () => {
  it("refuses /responses and /completions without a key (401) and with a management key (403)", async () => {
    for (const dialect of ["responses", "completions"] as const) {
      const res = await fetch(`${gw.apiUrl}${paths[dialect]}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(bodyOf(dialect, "dm/tokens")) });
      expect(res.status, dialect).toBe(401);
      const management = await gw.call("POST", paths[dialect], { body: bodyOf(dialect, "dm/tokens") });
      expect(management.status, dialect).toBe(403);
    }
  });

  it("counts /responses and /completions against the key's rate limit as chat is, answering 429 with Retry-After", async () => {
    const { key } = await newKey({ rate_limit_per_minute: 4 });
    const statuses: number[] = [];
    for (const dialect of ["chat", "responses", "completions", "responses"] as const) statuses.push((await ask(key, dialect, bodyOf(dialect, "dm/tokens"), false)).status);
    expect(statuses).toEqual([200, 200, 200, 200]);
    const before = alpha.requests.length;
    for (const dialect of dialects) {
      const limited = await gw.call("POST", paths[dialect], { key, body: bodyOf(dialect, "dm/tokens") });
      expect(limited.status, dialect).toBe(429);
      expect(limited.body.error).toMatchObject({ code: 429, message: "Rate limit exceeded" });
      expect(Number(limited.headers.get("retry-after")), dialect).toBeGreaterThanOrEqual(1);
    }
    expect(alpha.requests.length).toBe(before);
  });
});
