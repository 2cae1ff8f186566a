import { createServer } from "node:http";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { eventually } from "./support/eventually.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";
import { listenLocal } from "./support/listen.js";

/**
 * A provider that fails before the client got a byte (an error for its first event, a body that is not an
 * answer, a stream that ends before its first event) leaves the next endpoint to serve; one that stops
 * mid-answer without saying so is a failure, not a success.
 */
type Json = Record<string, unknown>;

/** What the fake sends for one upstream model: a status, a content type and a body as it is. */
interface Raw {
  status?: number;
  type: string;
  body: string;
}

const sse = (...events: Array<Json | string>) => events.map((e) => (typeof e === "string" ? e : `data: ${JSON.stringify(e)}\n\n`)).join("");
const named = (name: string, data: Json) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
const html = "<!doctype html><html><body><h1>502 Bad Gateway</h1></body></html>";
const chunk = (model: string, choices: Json[], extra: Json = {}) => ({ id: "c-1", object: "chat.completion.chunk", created: 1, model, choices, ...extra });

const textChunk = (model: string, choices: Json[], extra: Json = {}) => ({ id: "t-1", object: "text_completion", created: 1, model, choices, ...extra });

/** The healthy endpoint: OpenAI's chat shape (its legacy text shape on `/completions`), 10 prompt and 7 completion tokens. */
function ok(body: Json, path: string): Raw {
  const model = String(body.model);
  const usage = { prompt_tokens: 10, completion_tokens: 7, total_tokens: 17 };
  if (path.endsWith("/v1/completions") || path === "/completions") {
    const answer = [{ index: 0, text: "Hello from good", finish_reason: "stop" }];
    if (!body.stream) return json(textChunk(model, answer, { usage }));
    return stream(sse(textChunk(model, [{ index: 0, text: "Hello from good", finish_reason: null }]), textChunk(model, [{ index: 0, text: "", finish_reason: "stop" }]), textChunk(model, [], { usage }), "data: [DONE]\n\n"));
  }
  if (!body.stream) {
    const answer = { id: "c-1", object: "chat.completion", created: 1, model, choices: [{ index: 0, message: { role: "assistant", content: "Hello from good" }, finish_reason: "stop" }], usage };
    return { type: "application/json", body: JSON.stringify(answer) };
  }
  return {
    type: "text/event-stream",
    body: sse(
      chunk(model, [{ index: 0, delta: { role: "assistant", content: "Hello from good" }, finish_reason: null }]),
      chunk(model, [{ index: 0, delta: {}, finish_reason: "stop" }]),
      chunk(model, [], { usage }),
      "data: [DONE]\n\n",
    ),
  };
}

const stream = (body: string): Raw => ({ type: "text/event-stream", body });
const json = (value: Json): Raw => ({ type: "application/json", body: JSON.stringify(value) });

const scripts: Record<string, (body: Json, path: string) => Raw> = {
  ok,
  "chat-error-503": () => stream(sse({ error: { code: 503, message: "The model is overloaded" } })),
  "chat-error-429": () => stream(sse({ error: { code: 429, message: "Rate limited upstream" } })),
  "chat-html": () => ({ type: "text/html", body: html }),
  "chat-empty": () => stream(""),
  "text-cut-clean": (body) => stream(sse(textChunk(String(body.model), [{ index: 0, text: "Half an ans", finish_reason: null }]))),
  "chat-cut-clean": (body) => stream(sse(chunk(String(body.model), [{ index: 0, delta: { role: "assistant", content: "Half an ans" }, finish_reason: null }]))),
  "json-error-503": () => json({ error: { code: 503, message: "The model is overloaded" } }),
  "json-not-completion": () => json({ message: "ok" }),
  "anthropic-overloaded": (body) =>
    body.stream ? stream(named("error", { type: "error", error: { type: "overloaded_error", message: "Overloaded" } })) : json({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } }),
  "anthropic-html": () => ({ type: "text/html", body: html }),
  "responses-overloaded": () => stream(named("error", { type: "error", code: "server_is_overloaded", message: "The server is overloaded", sequence_number: 0 })),
  "responses-html": () => ({ type: "text/html", body: html }),
};

let gw: TestGateway;
let upstream: { baseUrl: string; stop(): Promise<void> };
const calls: string[] = [];
let key: string;

const pricing = { prompt: "0.000001", completion: "0.000002" };
const endpoint = (provider: string, upstreamModel: string) => ({ provider, upstream_model: upstreamModel, pricing, max_completion_tokens: 1000 });
/** Each script is a model served first by the fake of its wire format (`bad`, `bad-anthropic`, `bad-responses`), then by `good`. */
const badOf = (script: string) => (script.startsWith("anthropic-") ? "bad-anthropic" : script.startsWith("responses-") ? "bad-responses" : "bad");

beforeAll(async () => {
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const piece of req) chunks.push(piece as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Json;
    calls.push(String(body.model));
    const raw = scripts[String(body.model)]!(body, req.url ?? "");
    res.writeHead(raw.status ?? 200, { "content-type": raw.type }).end(raw.body);
  });
  upstream = await listenLocal(server);
  const provider = (slug: string, adapter: string) => ({ slug, name: slug, adapter, base_url: upstream.baseUrl, requires_api_key: false });
  const catalog = {
    providers: [provider("bad", "openai-compatible"), provider("bad-anthropic", "anthropic"), provider("bad-responses", "openai"), provider("good", "openai-compatible")],
    models: Object.keys(scripts).map((script) => ({ id: `f/${script}`, name: script, context_length: 8000, endpoints: [endpoint(badOf(script), script), endpoint("good", "ok")] })),
  };
  // A failed endpoint rests only briefly, so that each test meets its bad endpoint first again.
  gw = await startTestGateway({ ...(await catalogEnv(catalog)), UPSTREAM_FIRST_BYTE_TIMEOUT_MS: "1500", UPSTREAM_IDLE_TIMEOUT_MS: "1500", UPSTREAM_FAILURE_COOLDOWN_MS: "100" });
  key = String((await gw.call("POST", "/keys", { body: { name: "first-event" } })).body.key);
});
// Past the bad endpoint's rest (UPSTREAM_FAILURE_COOLDOWN_MS), so that it is tried first again.
beforeEach(() => new Promise((resolve) => setTimeout(resolve, 150)));
afterAll(async () => {
  await gw?.stop();
  await upstream?.stop();
});

const messages = [{ role: "user", content: "Say hello" }];
const order = (script: string) => ({ order: [badOf(script), "good"], allow_fallbacks: true });

async function post(path: string, body: Json): Promise<{ status: number; id: string; text: string }> {
  const res = await fetch(`${gw.apiUrl}${path}`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) });
  return { status: res.status, id: String(res.headers.get("x-generation-id")), text: await res.text() };
}

const frames = (text: string) =>
  text
    .split("\n\n")
    .map((f) => f.split("\n").find((line) => line.startsWith("data: "))?.slice(6))
    .filter((data): data is string => data !== undefined && data !== "[DONE]")
    .map((data) => JSON.parse(data) as Json);

/** The record of a generation once written: which endpoint served, and each attempt's status. */
async function recorded(id: string): Promise<{ provider_name: string; provider_responses: Array<{ status: number | null; provider_name: string }>; finish_reason: string | null; total_cost: number; tokens_completion: number }> {
  await eventually(async () => (await gw.call("GET", `/generation?id=${id}`, { key })).status === 200, 10_000);
  return (await gw.call("GET", `/generation?id=${id}`, { key })).body.data as never;
}

/** The request fell back: the bad endpoint was tried once, then `good` served; the record says both. */
async function fellBack(script: string, id: string): Promise<void> {
  expect(calls.filter((c) => c === script).length).toBeGreaterThanOrEqual(1);
  const record = await recorded(id);
  expect(record.provider_name).toBe("good");
  expect(record.provider_responses.map((r) => r.provider_name)).toEqual([badOf(script), "good"]);
  expect(record.provider_responses[0]?.status).not.toBe(200);
}

describe("a stream whose first event is an error", () => {
  for (const script of ["chat-error-503", "chat-error-429", "anthropic-overloaded"]) {
    it(`falls back to the next endpoint (${script}, Chat Completions)`, async () => {
      const res = await post("/chat/completions", { model: `f/${script}`, messages, stream: true, provider: order(script) });
      expect(res.status).toBe(200);
      expect(res.text).toContain("Hello from good");
      expect(res.text.trimEnd().endsWith("data: [DONE]")).toBe(true);
      await fellBack(script, res.id);
    });
  }

  it("falls back to the next endpoint (OpenAI Responses, server_is_overloaded)", async () => {
    const res = await post("/responses", { model: "f/responses-overloaded", input: "Say hello", stream: true, provider: order("responses-overloaded") });
    expect(res.status).toBe(200);
    expect(res.text).toContain("Hello from good");
    expect(res.text).toContain("response.completed");
    await fellBack("responses-overloaded", res.id);
  });
});

describe("a 200 stream that is not one", () => {
  for (const script of ["chat-html", "chat-empty", "anthropic-html"]) {
    it(`falls back to the next endpoint (${script}, Chat Completions)`, async () => {
      const res = await post("/chat/completions", { model: `f/${script}`, messages, stream: true, provider: order(script) });
      expect(res.status).toBe(200);
      expect(res.text).toContain("Hello from good");
      const finishes = frames(res.text).flatMap((f) => ((f.choices ?? []) as Array<{ finish_reason?: string | null }>).map((c) => c.finish_reason));
      expect(finishes).toContain("stop");
      await fellBack(script, res.id);
    });
  }

  for (const script of ["chat-html", "chat-empty", "responses-html"]) {
    it(`falls back to the next endpoint (${script}, OpenAI Responses)`, async () => {
      const res = await post("/responses", { model: `f/${script}`, input: "Say hello", stream: true, provider: order(script) });
      expect(res.status).toBe(200);
      expect(res.text).toContain("Hello from good");
      await fellBack(script, res.id);
    });
  }

  it("falls back to the next endpoint (chat-empty, Anthropic Messages)", async () => {
    const res = await post("/messages", { model: "f/chat-empty", max_tokens: 100, messages, stream: true, provider: order("chat-empty") });
    expect(res.status).toBe(200);
    expect(res.text).toContain("Hello from good");
    await fellBack("chat-empty", res.id);
  });
});

describe("a buffered 200 answer that is not a completion", () => {
  for (const script of ["json-error-503", "json-not-completion", "anthropic-overloaded"]) {
    it(`falls back to the next endpoint (${script})`, async () => {
      const res = await gw.call("POST", "/chat/completions", { key, body: { model: `f/${script}`, messages, provider: order(script) } });
      expect(res.status).toBe(200);
      expect(JSON.stringify(res.body.choices)).toContain("Hello from good");
      await fellBack(script, String(res.body.id));
    });
  }
});

describe("a stream that ends mid-answer without a finish reason, usage or [DONE]", () => {
  it("ends with an in-band error, and is recorded as failed and charged its estimate", async () => {
    const res = await post("/chat/completions", { model: "f/chat-cut-clean", messages, stream: true, provider: order("chat-cut-clean") });
    expect(res.status).toBe(200);
    expect(res.text).toContain("Half an ans");
    expect(res.text).not.toContain("[DONE]");
    const last = frames(res.text).at(-1) as { error?: { code: number }; choices?: Array<{ finish_reason: string }> };
    expect(last.error?.code).toBe(502);
    expect(last.choices?.[0]?.finish_reason).toBe("error");
    const record = await recorded(res.id);
    expect(record.provider_name).toBe("bad");
    expect(record.finish_reason).toBe("error");
    expect(record.tokens_completion).toBeGreaterThan(0);
    expect(record.total_cost).toBeGreaterThan(0);
  });
});

describe("legacy text completions that are not one", () => {
  for (const script of ["json-error-503", "json-not-completion"]) {
    it(`fall back to the next endpoint when buffered (${script})`, async () => {
      const res = await post("/completions", { model: `f/${script}`, prompt: "Say hello", provider: order(script) });
      expect(res.status, res.text).toBe(200);
      expect(res.text).toContain("Hello from good");
      await fellBack(script, res.id);
    });
  }

  it("fall back to the next endpoint when a stream's first event is an error", async () => {
    const res = await post("/completions", { model: "f/chat-error-503", prompt: "Say hello", stream: true, provider: order("chat-error-503") });
    expect(res.status).toBe(200);
    expect(res.text).toContain("Hello from good");
    await fellBack("chat-error-503", res.id);
  });

  it("end with an in-band error when the stream stops mid-answer without saying so", async () => {
    const res = await post("/completions", { model: "f/text-cut-clean", prompt: "Say hello", stream: true, provider: order("text-cut-clean") });
    expect(res.status).toBe(200);
    expect(res.text).toContain("Half an ans");
    expect(res.text).not.toContain("[DONE]");
    expect((frames(res.text).at(-1) as { error?: { code: number } }).error?.code).toBe(502);
    expect((await recorded(res.id)).finish_reason).toBe("error");
  });
});
