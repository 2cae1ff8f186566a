import { describe, expect, it } from "vitest";
import { incompleteAnswer, loadRequest, type ChatEndpoint } from "./chat-load.js";
import { defaultPlans, parsePlan, parsePlans, planLabel, servesDialect, skippedTargets } from "./plans.js";

describe("plan parsing", () => {
  it("reads a plan without a dialect as chat, so lists written before Responses plans keep their meaning", () => {
    expect(parsePlans("buffered:1,stream:50")).toEqual([
      { dialect: "chat", stream: false, concurrency: 1 },
      { dialect: "chat", stream: true, concurrency: 50 },
    ]);
  });

  it("reads a dialect prefix", () => {
    expect(parsePlans("responses:buffered:10, responses:stream:10,chat:stream:1")).toEqual([
      { dialect: "responses", stream: false, concurrency: 10 },
      { dialect: "responses", stream: true, concurrency: 10 },
      { dialect: "chat", stream: true, concurrency: 1 },
    ]);
  });

  it.each(["", "buffered", "buffered:0", "buffered:1.5", "buffered:x", "batch:10", "completions:buffered:10", "responses:10", "responses:buffered:10:1", ":buffered:10"])(
    "refuses %j",
    (text) => {
      expect(() => parsePlan(text)).toThrow(/BENCH_CHAT_PLANS: bad plan/);
    },
  );

  it("writes a plan back as it is given, chat without its prefix", () => {
    expect(parsePlans("chat:buffered:1,stream:10,responses:stream:10").map(planLabel)).toEqual(["buffered:1", "stream:10", "responses:stream:10"]);
  });

  it("runs the chat plans by default, with Responses buffered and streamed at c=10 beside chat's", () => {
    const labels = parsePlans(defaultPlans).map(planLabel);
    expect(labels).toEqual(["buffered:1", "buffered:10", "responses:buffered:10", "buffered:50", "stream:1", "stream:10", "responses:stream:10", "stream:50"]);
  });
});

describe("targets of a dialect", () => {
  it("runs chat everywhere and Responses on Switchyard's targets only", () => {
    const targets = ["direct", "standalone", "standalone-pg", "topology", "portkey"];
    expect(targets.filter((t) => servesDialect(t, "chat"))).toEqual(targets);
    expect(targets.filter((t) => servesDialect(t, "responses"))).toEqual(["standalone", "standalone-pg", "topology"]);
  });

  it("names the skipped targets only when a Responses plan runs and skips some", () => {
    const targets = ["direct", "standalone", "portkey"];
    expect(skippedTargets(parsePlans("buffered:10,stream:10"), targets)).toEqual([]);
    expect(skippedTargets(parsePlans("buffered:10,responses:stream:10"), ["standalone", "topology"])).toEqual([]);
    expect(skippedTargets(parsePlans("buffered:10,responses:stream:10"), targets)).toEqual([
      "responses plans skip direct, portkey (only Switchyard's targets are called on the Responses API)",
    ]);
  });
});

describe("requests and their answers", () => {
  const endpoint: ChatEndpoint = { origin: "http://127.0.0.1:1", path: "/api/v1/chat/completions", responsesPath: "/api/v1/responses", headers: {}, model: "bench/model" };

  it("sends chat messages to the chat path and a Responses input to the Responses path", () => {
    const chat = loadRequest(endpoint, "chat", true);
    expect(chat.path).toBe("/api/v1/chat/completions");
    expect(JSON.parse(chat.body)).toEqual({ model: "bench/model", messages: [{ role: "user", content: "Say hello" }], stream: true });
    const responses = loadRequest(endpoint, "responses", false);
    expect(responses.path).toBe("/api/v1/responses");
    expect(JSON.parse(responses.body)).toEqual({ model: "bench/model", input: "Say hello", stream: false });
  });

  it("refuses a Responses request to a target that does not serve the API", () => {
    expect(() => loadRequest({ ...endpoint, responsesPath: undefined }, "responses", true)).toThrow(/does not serve the Responses API/);
  });

  it("takes a Responses answer as complete on its response object or its response.completed event", () => {
    expect(incompleteAnswer("responses", false, '{"id":"gen-1","object":"response","status":"completed","output":[]}')).toBeUndefined();
    expect(incompleteAnswer("responses", false, '{"error":{"code":502}}')).toMatch(/not a response object/);
    const events = 'event: response.created\ndata: {"type":"response.created"}\n\nevent: response.completed\ndata: {"type":"response.completed"}\n\n';
    expect(incompleteAnswer("responses", true, events)).toBeUndefined();
    expect(incompleteAnswer("responses", true, events.replaceAll("completed", "failed"))).toMatch(/without response.completed/);
  });

  it("keeps chat's checks: [DONE] for streams, choices for buffered answers", () => {
    expect(incompleteAnswer("chat", true, 'data: {"choices":[]}\n\ndata: [DONE]\n\n')).toBeUndefined();
    expect(incompleteAnswer("chat", true, 'data: {"choices":[]}\n\n')).toMatch(/without \[DONE\]/);
    expect(incompleteAnswer("chat", false, '{"choices":[]}')).toBeUndefined();
    expect(incompleteAnswer("chat", false, '{"object":"response"}')).toMatch(/without choices/);
  });
});
