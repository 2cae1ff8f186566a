import { describe, expect, it } from "vitest";
import { holds, incompleteAnswer, loadRequest, type ChatEndpoint } from "./chat-load.js";
import { embeddingInputs } from "./embedding-inputs.js";
import { defaultPlans, modesOf, pairedChat, parsePlan, parsePlans, planLabel, servesDialect, skippedTargets } from "./plans.js";

/** An answer as one chunk of bytes. */
const bytes = (text: string) => [Buffer.from(text)];

describe("plan parsing", () => {
  it("reads a plan without a dialect as chat, so lists written before Responses plans keep their meaning", () => {
    expect(parsePlans("buffered:1,stream:50")).toEqual([
      { dialect: "chat", stream: false, concurrency: 1 },
      { dialect: "chat", stream: true, concurrency: 50 },
    ]);
  });

  it("reads a dialect prefix", () => {
    expect(parsePlans("responses:buffered:10, responses:stream:10,chat:stream:1,messages:buffered:10,messages:stream:10")).toEqual([
      { dialect: "responses", stream: false, concurrency: 10 },
      { dialect: "responses", stream: true, concurrency: 10 },
      { dialect: "chat", stream: true, concurrency: 1 },
      { dialect: "messages", stream: false, concurrency: 10 },
      { dialect: "messages", stream: true, concurrency: 10 },
    ]);
  });

  it("reads an embeddings plan, buffered only", () => {
    expect(parsePlans("embeddings:buffered:10,embeddings:buffered:1")).toEqual([
      { dialect: "embeddings", stream: false, concurrency: 10 },
      { dialect: "embeddings", stream: false, concurrency: 1 },
    ]);
    expect(modesOf("embeddings")).toEqual([false]);
    expect(modesOf("messages")).toEqual([false, true]);
  });

  it("refuses a streamed embeddings plan, saying the API has only buffered answers", () => {
    expect(() => parsePlan("embeddings:stream:10")).toThrow(
      "BENCH_CHAT_PLANS: bad plan embeddings:stream:10 (the Embeddings API answers in one body: only embeddings:buffered:<concurrency>)",
    );
  });

  it("reads a prompt size on a chat plan, with or without its prefix, and no size on a plan without one", () => {
    expect(parsePlans("buffered:10:64k,chat:stream:1:256k,stream:50:64k")).toEqual([
      { dialect: "chat", stream: false, concurrency: 10, prompt: "64k" },
      { dialect: "chat", stream: true, concurrency: 1, prompt: "256k" },
      { dialect: "chat", stream: true, concurrency: 50, prompt: "64k" },
    ]);
    expect(Object.keys(parsePlan("buffered:10"))).toEqual(["dialect", "stream", "concurrency"]);
    expect(Object.keys(parsePlan("responses:buffered:10"))).toEqual(["dialect", "stream", "concurrency"]);
  });

  it.each(["responses:buffered:10:64k", "messages:stream:10:256k", "embeddings:buffered:10:64k"])("refuses a prompt size on %s, saying sizes are for chat plans", (text) => {
    expect(() => parsePlan(text)).toThrow(`BENCH_CHAT_PLANS: bad plan ${text} (a prompt size is for chat plans only: [chat:]buffered|stream:<concurrency>:64k|256k)`);
  });

  it("names the sizes it knows when it refuses one", () => {
    expect(() => parsePlan("buffered:10:128k")).toThrow(
      "BENCH_CHAT_PLANS: bad plan buffered:10:128k (expected [chat|responses|messages|embeddings:]buffered|stream:<concurrency>[:64k|256k])",
    );
  });

  it.each(["buffered:10:128k", "buffered:10:64K", "buffered:10:64", "buffered:10:", "buffered:64k", "chat:buffered:10:64k:1", "chat:buffered:64k:10", "64k:buffered:10", "stream:0:64k"])(
    "refuses the size in %j",
    (text) => {
      expect(() => parsePlan(text)).toThrow(/BENCH_CHAT_PLANS: bad plan/);
    },
  );

  it.each(["", "buffered", "buffered:0", "buffered:1.5", "buffered:x", "batch:10", "completions:buffered:10", "responses:10", "responses:buffered:10:1", ":buffered:10", "anthropic:buffered:10", "messages:10", "embeddings:10", "embedding:buffered:10", "embeddings:buffered:0"])(
    "refuses %j",
    (text) => {
      expect(() => parsePlan(text)).toThrow(/BENCH_CHAT_PLANS: bad plan/);
    },
  );

  it("writes a plan back as it is given, chat without its prefix", () => {
    expect(parsePlans("chat:buffered:1,stream:10,responses:stream:10,messages:buffered:10,embeddings:buffered:10,chat:buffered:10:64k,stream:1:256k").map(planLabel)).toEqual([
      "buffered:1",
      "stream:10",
      "responses:stream:10",
      "messages:buffered:10",
      "embeddings:buffered:10",
      "buffered:10:64k",
      "stream:1:256k",
    ]);
  });

  it("runs the chat plans by default, with Responses and Messages buffered and streamed and embeddings buffered at c=10 beside chat's, and the large conversations buffered at c=10", () => {
    const labels = parsePlans(defaultPlans).map(planLabel);
    expect(labels).toEqual([
      "buffered:1",
      "buffered:10",
      "responses:buffered:10",
      "messages:buffered:10",
      "embeddings:buffered:10",
      "buffered:10:64k",
      "buffered:10:256k",
      "buffered:50",
      "stream:1",
      "stream:10",
      "responses:stream:10",
      "messages:stream:10",
      "stream:50",
    ]);
  });

  it("pairs each plan of another dialect with chat's one-message plan of its mode and concurrency, and chat plans with none", () => {
    const paired = parsePlans("responses:stream:10,messages:buffered:10,embeddings:buffered:50,buffered:10,buffered:10:64k").map(pairedChat);
    expect(paired.map((plan) => plan && planLabel(plan))).toEqual(["stream:10", "buffered:10", "buffered:50", undefined, undefined]);
    expect(paired[0]).toEqual({ dialect: "chat", stream: true, concurrency: 10 });
  });
});

describe("targets of a dialect", () => {
  const targets = ["direct", "proxy", "standalone", "standalone-pg", "topology", "portkey"];

  it("runs chat everywhere and Responses on Switchyard's targets only", () => {
    expect(targets.filter((t) => servesDialect(t, "chat"))).toEqual(targets);
    expect(targets.filter((t) => servesDialect(t, "responses"))).toEqual(["standalone", "standalone-pg", "topology"]);
  });

  it("runs Messages on Switchyard's targets, direct calls and the bare proxy, whose upstream answers Anthropic's /messages", () => {
    expect(targets.filter((t) => servesDialect(t, "messages"))).toEqual(["direct", "proxy", "standalone", "standalone-pg", "topology"]);
  });

  it("runs every dialect on another build of standalone (baseline), as on standalone", () => {
    for (const dialect of ["chat", "responses", "messages", "embeddings"] as const) expect(servesDialect("baseline", dialect)).toBe(servesDialect("standalone", dialect));
  });

  it("runs embeddings on Switchyard's targets, direct calls and the bare proxy, whose upstream answers /embeddings", () => {
    expect(targets.filter((t) => servesDialect(t, "embeddings"))).toEqual(["direct", "proxy", "standalone", "standalone-pg", "topology"]);
    expect(skippedTargets(parsePlans("buffered:10,embeddings:buffered:10"), targets)).toEqual([
      "embeddings plans skip portkey (the Embeddings API is called only on direct, proxy, standalone, standalone-pg, topology)",
    ]);
  });

  it("names the skipped targets only when a plan of another dialect runs and skips some", () => {
    const some = ["direct", "standalone", "portkey"];
    expect(skippedTargets(parsePlans("buffered:10,stream:10"), some)).toEqual([]);
    expect(skippedTargets(parsePlans("buffered:10,responses:stream:10"), ["standalone", "topology"])).toEqual([]);
    expect(skippedTargets(parsePlans("buffered:10,responses:stream:10"), some)).toEqual([
      "responses plans skip direct, portkey (the Responses API is called only on standalone)",
    ]);
    expect(skippedTargets(parsePlans("messages:buffered:10,responses:stream:10"), some)).toEqual([
      "responses plans skip direct, portkey (the Responses API is called only on standalone)",
      "messages plans skip portkey (the Messages API is called only on direct, standalone)",
    ]);
    expect(skippedTargets(parsePlans("messages:stream:10"), ["portkey"])).toEqual(["messages plans skip portkey (the Messages API is called on none of them)"]);
  });
});

describe("requests and their answers", () => {
  const endpoint: ChatEndpoint = {
    origin: "http://127.0.0.1:1",
    headers: { authorization: "Bearer sk-test" },
    routes: {
      chat: { path: "/api/v1/chat/completions", model: "bench/model" },
      responses: { path: "/api/v1/responses", model: "bench/model" },
      messages: { path: "/api/v1/messages", model: "bench/anthropic" },
      embeddings: { path: "/api/v1/embeddings", model: "bench/embedding" },
    },
  };

  it("sends chat messages to the chat path and a Responses input to the Responses path", () => {
    const chat = loadRequest(endpoint, "chat", true);
    expect(chat.path).toBe("/api/v1/chat/completions");
    expect(chat.headers).toEqual({ "content-type": "application/json", authorization: "Bearer sk-test" });
    expect(JSON.parse(chat.body.toString())).toEqual({ model: "bench/model", messages: [{ role: "user", content: "Say hello" }], stream: true });
    const responses = loadRequest(endpoint, "responses", false);
    expect(responses.path).toBe("/api/v1/responses");
    expect(JSON.parse(responses.body.toString())).toEqual({ model: "bench/model", input: "Say hello", stream: false });
  });

  it("sends a chat plan's large conversation to the chat path, with the same headers as the one-message body", () => {
    const large = loadRequest(endpoint, "chat", false, "64k");
    const small = loadRequest(endpoint, "chat", false);
    expect(large.path).toBe(small.path);
    expect(large.headers).toEqual(small.headers);
    const body = JSON.parse(large.body.toString()) as { model: string; messages: Array<{ role: string }>; stream: boolean };
    expect(Object.keys(body)).toEqual(["model", "messages", "stream"]);
    expect(body).toMatchObject({ model: "bench/model", stream: false });
    expect(body.messages[0]!.role).toBe("system");
    expect(body.messages.length).toBeGreaterThan(30);
    expect(JSON.parse(loadRequest(endpoint, "chat", true, "256k").body.toString())).toMatchObject({ stream: true });
  });

  it("sends a Messages request with max_tokens and Anthropic's version header to the Messages path, on its own model", () => {
    const messages = loadRequest(endpoint, "messages", true);
    expect(messages.path).toBe("/api/v1/messages");
    expect(messages.headers).toEqual({ "content-type": "application/json", authorization: "Bearer sk-test", "anthropic-version": "2023-06-01" });
    expect(JSON.parse(messages.body.toString())).toEqual({ model: "bench/anthropic", max_tokens: 1024, messages: [{ role: "user", content: "Say hello" }], stream: true });
    expect(JSON.parse(loadRequest(endpoint, "messages", false).body.toString())).toMatchObject({ stream: false });
  });

  it("sends 16 different passages of 60–100 words for base64 vectors to the embeddings path, on its own model", () => {
    const embeddings = loadRequest(endpoint, "embeddings", false);
    expect(embeddings.path).toBe("/api/v1/embeddings");
    expect(embeddings.headers).toEqual({ "content-type": "application/json", authorization: "Bearer sk-test" });
    const body = JSON.parse(embeddings.body.toString()) as { model: string; input: string[]; encoding_format: string };
    expect(Object.keys(body).sort()).toEqual(["encoding_format", "input", "model"]);
    expect(body.model).toBe("bench/embedding");
    expect(body.encoding_format).toBe("base64");
    expect(body.input).toEqual(embeddingInputs);
    expect(body.input).toHaveLength(16);
    expect(new Set(body.input).size).toBe(16);
    for (const text of body.input) {
      const words = text.split(/\s+/).length;
      expect(words).toBeGreaterThanOrEqual(60);
      expect(words).toBeLessThanOrEqual(100);
    }
    expect(loadRequest(endpoint, "embeddings", false).body).toEqual(embeddings.body);
  });

  it("refuses a request of a dialect the target does not serve, and a streamed embeddings request", () => {
    const chatOnly = { ...endpoint, routes: { chat: endpoint.routes.chat } };
    expect(() => loadRequest(chatOnly, "responses", true)).toThrow(/does not serve the Responses API/);
    expect(() => loadRequest(chatOnly, "messages", false)).toThrow(/does not serve the Messages API/);
    expect(() => loadRequest(chatOnly, "embeddings", false)).toThrow(/does not serve the Embeddings API/);
    expect(() => loadRequest(endpoint, "embeddings", true)).toThrow("the Embeddings API has no streamed answers");
  });

  it("finds a marker in an answer's chunks wherever they were cut, and only from the chunk asked", () => {
    const text = '{"id":"gen-1","object":"list","data":[{"object":"embedding","embedding":"AACAPw==","index":0}]}';
    for (let first = 1; first < text.length; first++) {
      for (const second of [first + 1, first + 3, first + 17]) {
        const chunks = [text.slice(0, first), text.slice(first, second), text.slice(second)].map((part) => Buffer.from(part));
        expect(holds(chunks, '"object":"list"')).toBe(true);
        expect(holds(chunks, '"embedding":')).toBe(true);
        expect(holds(chunks, '"object":"response"')).toBe(false);
      }
    }
    const chunks = ["data: {}", "\n\ndat", "a: [DONE]"].map((part) => Buffer.from(part));
    expect(holds(chunks, "data: [DONE]", 1)).toBe(true);
    expect(holds(chunks, "data: {}", 1)).toBe(false);
    expect(holds([], "data:")).toBe(false);
  });

  it("takes an embeddings answer as complete when it is a list with an embedding", () => {
    const answer = '{"id":"gen-1","object":"list","data":[{"object":"embedding","embedding":"AACAPw==","index":0}],"model":"bench/embedding"}';
    expect(incompleteAnswer("embeddings", false, bytes(answer))).toBeUndefined();
    expect(incompleteAnswer("embeddings", false, bytes('{"error":{"code":502,"message":"no embedding"}}'))).toMatch(/without "object":"list"/);
    expect(incompleteAnswer("embeddings", false, bytes('{"object":"list","data":[],"model":"bench/embedding"}'))).toMatch(/without "embedding":/);
    expect(incompleteAnswer("embeddings", true, bytes(answer))).toMatch(/a streamed answer of the Embeddings API, which has none/);
  });

  it("takes a Responses answer as complete on its response object or its response.completed event", () => {
    expect(incompleteAnswer("responses", false, bytes('{"id":"gen-1","object":"response","status":"completed","output":[]}'))).toBeUndefined();
    expect(incompleteAnswer("responses", false, bytes('{"error":{"code":502}}'))).toMatch(/without "object":"response"/);
    const events = 'event: response.created\ndata: {"type":"response.created"}\n\nevent: response.completed\ndata: {"type":"response.completed"}\n\n';
    expect(incompleteAnswer("responses", true, bytes(events))).toBeUndefined();
    expect(incompleteAnswer("responses", true, bytes(events.replaceAll("completed", "failed")))).toMatch(/without response.completed/);
  });

  it("takes a Messages answer as complete on its message object or its message_stop event", () => {
    expect(incompleteAnswer("messages", false, bytes('{"id":"gen-1","type":"message","role":"assistant","content":[]}'))).toBeUndefined();
    expect(incompleteAnswer("messages", false, bytes('{"type":"error","error":{"type":"api_error","message":"x"}}'))).toMatch(/without "type":"message"/);
    const events = 'event: message_start\ndata: {"type":"message_start"}\n\nevent: message_stop\ndata: {"type":"message_stop"}\n\n';
    expect(incompleteAnswer("messages", true, bytes(events))).toBeUndefined();
    const failed = 'event: message_start\ndata: {"type":"message_start"}\n\nevent: error\ndata: {"type":"error"}\n\n';
    expect(incompleteAnswer("messages", true, bytes(failed))).toMatch(/without event: message_stop/);
  });

  it("keeps chat's checks: [DONE] for streams, choices for buffered answers", () => {
    expect(incompleteAnswer("chat", true, bytes('data: {"choices":[]}\n\ndata: [DONE]\n\n'))).toBeUndefined();
    expect(incompleteAnswer("chat", true, bytes('data: {"choices":[]}\n\n'))).toMatch(/without data: \[DONE\]/);
    expect(incompleteAnswer("chat", false, bytes('{"choices":[]}'))).toBeUndefined();
    expect(incompleteAnswer("chat", false, bytes('{"object":"response"}'))).toMatch(/without "choices"/);
  });
});
