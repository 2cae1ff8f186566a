import type { ChatCompletionRequest } from "@switchyard/contracts";
import { describe, expect, it } from "vitest";
import { activePlugins, compressMessages, healJson } from "./plugins.js";
import { dropUnsupported } from "./parameters.js";

describe("response healing", () => {
  it("repairs fences, surrounding prose, trailing commas and unclosed values", () => {
    expect(healJson('{"a":1}')).toBe('{"a":1}');
    expect(JSON.parse(healJson('```json\n{"a": [1, 2,],}\n```')!)).toEqual({ a: [1, 2] });
    expect(JSON.parse(healJson('Here you go: {"ok": true} hope it helps')!)).toEqual({ ok: true });
    expect(JSON.parse(healJson('{"name": "Ada", "tags": ["x", "y"')!)).toEqual({ name: "Ada", tags: ["x", "y"] });
    expect(JSON.parse(healJson('{"text": "cut off')!)).toEqual({ text: "cut off" });
    expect(healJson("no json here")).toBeUndefined();
  });
});

describe("context compression", () => {
  it("drops middle messages, keeping system, the first user message and the latest ones", () => {
    const messages = [
      { role: "system", content: "rules" },
      { role: "user", content: "first question" },
      ...Array.from({ length: 20 }, (_, i) => ({ role: i % 2 ? "user" : "assistant", content: "x".repeat(400) })),
      { role: "user", content: "latest" },
    ];
    const compressed = compressMessages(messages, 1000);
    expect(compressed[0]).toEqual(messages[0]);
    expect(compressed[1]).toEqual(messages[1]);
    expect(compressed.at(-1)).toEqual({ role: "user", content: "latest" });
    expect(compressed.length).toBeLessThan(messages.length);
    expect(JSON.stringify(compressed).length / 4).toBeLessThanOrEqual(1000);
    expect(compressMessages(messages.slice(0, 3), 100_000)).toHaveLength(3);
  });
});

describe("unsupported parameters", () => {
  it("drops sampling parameters an endpoint does not declare and keeps the rest", () => {
    const { body, dropped } = dropUnsupported({ messages: [], temperature: 1, top_k: 5, seed: 3, custom: true }, ["temperature", "seed"]);
    expect(body).toEqual({ messages: [], temperature: 1, seed: 3, custom: true });
    expect(dropped).toEqual(["top_k"]);
    expect(dropUnsupported({ top_k: 1 }, []).dropped).toEqual([]);
  });
});

describe("plugins and transforms", () => {
  const request = (extra: Record<string, unknown>) => ({ messages: [{ role: "user", content: "Hi" }], stream: false, ...extra }) as ChatCompletionRequest;

  it("turns context compression on for middle-out, as a plugin or a transform", () => {
    expect(activePlugins(request({ transforms: ["middle-out"] })).contextCompression).toBe(true);
    expect(activePlugins(request({ plugins: [{ id: "middle-out" }] })).contextCompression).toBe(true);
    expect(activePlugins(request({ transforms: [] })).contextCompression).toBe(false);
    expect(activePlugins(request({ transforms: null })).contextCompression).toBe(false);
  });

  it("refuses transforms it cannot apply, naming them", () => {
    expect(() => activePlugins(request({ transforms: "middle-out" }))).toThrow(/transforms: must be an array of transform names.*known: middle-out/);
    expect(() => activePlugins(request({ transforms: ["middle-out", "bogus", 3] }))).toThrow("transforms: unknown transform bogus, 3; known: middle-out");
  });

  it("points the web plugin to the web search server tool", () => {
    expect(() => activePlugins(request({ plugins: [{ id: "web" }] }))).toThrow(/web plugin is not supported.*"openrouter:web_search"/);
    expect(activePlugins(request({ plugins: [{ id: "web", enabled: false }] }))).toEqual({ responseHealing: false, contextCompression: false });
  });
});
