import { describe, expect, it } from "vitest";
import { loadRequest, type ChatEndpoint } from "./chat-load.js";
import { buildConversation, conversation } from "./conversation.js";
import { promptSizes, type PromptSize } from "./plans.js";

const bytes = (text: string) => Buffer.byteLength(text, "utf8");

const endpoint = (model: string): ChatEndpoint => ({
  origin: "http://127.0.0.1:1",
  headers: {},
  routes: { chat: { path: "/v1/chat/completions", model } },
});

describe("the large conversations", () => {
  it.each(Object.keys(promptSizes) as PromptSize[])("make a %s chat body within 2%% of its size, whatever the model's name and the mode", (size) => {
    const want = promptSizes[size] * 1024;
    for (const model of ["bench", "bench/model"]) {
      for (const stream of [false, true]) {
        const body = loadRequest(endpoint(model), "chat", stream, size).body;
        expect(Math.abs(body.length / want - 1)).toBeLessThanOrEqual(0.02);
        expect(JSON.parse(body.toString())).toEqual({ model, messages: conversation(size), stream });
      }
    }
  });

  it("come within a log line of their size", () => {
    for (const kib of [16, 64, 256]) {
      const body = JSON.stringify({ model: "bench/model", messages: buildConversation(kib), stream: false });
      expect(bytes(body)).toBeLessThanOrEqual(kib * 1024);
      expect(bytes(body)).toBeGreaterThan(kib * 1024 - 120);
    }
  });

  it("are a system prompt, then user and assistant turns in alternation, ending with the user's", () => {
    for (const size of Object.keys(promptSizes) as PromptSize[]) {
      const messages = conversation(size);
      expect(messages[0]!.role).toBe("system");
      const turns = messages.slice(1);
      expect(turns.length % 2).toBe(1);
      turns.forEach((message, i) => expect(message.role).toBe(i % 2 === 0 ? "user" : "assistant"));
      expect(turns.filter((m) => m.role === "assistant").every((m) => m.content.includes("```"))).toBe(true);
      expect(messages.at(-1)!.content).toMatch(/^Here is the log of the last CI run/);
    }
  });

  it("hold dozens of turns, each different, and more of them the larger the size", () => {
    const small = conversation("64k");
    const large = conversation("256k");
    expect(small.length).toBeGreaterThan(30);
    expect(large.length).toBeGreaterThan(small.length * 3);
    expect(new Set(large.map((m) => m.content)).size).toBe(large.length);
    // The smaller conversation is the start of the larger one, up to its closing turn.
    expect(large.slice(0, small.length - 1)).toEqual(small.slice(0, -1));
  });

  it("are the same text on every build, and built once per size", () => {
    expect(buildConversation(64)).toEqual(conversation("64k"));
    expect(JSON.stringify(buildConversation(256))).toBe(JSON.stringify(conversation("256k")));
    expect(conversation("64k")).toBe(conversation("64k"));
  });

  it("are ASCII, so their size in bytes is their length", () => {
    const text = JSON.stringify(conversation("256k"));
    expect(bytes(text)).toBe(text.length);
  });

  it("are sent only on chat plans", () => {
    const all: ChatEndpoint = { ...endpoint("bench"), routes: { chat: { path: "/c", model: "m" }, responses: { path: "/r", model: "m" } } };
    expect(() => loadRequest(all, "responses", false, "64k")).toThrow("a prompt size is for chat plans only, not the Responses API");
  });
});
