import { describe, expect, it } from "vitest";
import { messagesLeftOut, messagesRequest } from "./anthropic-messages.js";

const messages = [{ role: "user", content: "Hi" }];
const request = (body: Record<string, unknown>, endpointMaxTokens: number | null = 64_000) => messagesRequest({ messages, ...body }, "claude", endpointMaxTokens);
const thinkingOf = (body: Record<string, unknown>, endpointMaxTokens?: number | null) => request(body, endpointMaxTokens).thinking;

describe("Anthropic's thinking budget", () => {
  it("is the budget asked, or the effort's share of max_tokens raised to 1024", () => {
    expect(thinkingOf({ max_tokens: 4000, reasoning: { max_tokens: 2000 } })).toEqual({ type: "enabled", budget_tokens: 2000 });
    expect(thinkingOf({ max_tokens: 4000, reasoning: { effort: "high" } })).toEqual({ type: "enabled", budget_tokens: 3200 });
    expect(thinkingOf({ max_completion_tokens: 4000, reasoning_effort: "medium" })).toEqual({ type: "enabled", budget_tokens: 2000 });
    expect(thinkingOf({ max_tokens: 2000, reasoning: { effort: "minimal" } })).toEqual({ type: "enabled", budget_tokens: 1024 });
    expect(thinkingOf({ max_tokens: 1025, reasoning: { enabled: true } })).toEqual({ type: "enabled", budget_tokens: 1024 });
    // Without max_tokens, the endpoint's output limit is the whole.
    expect(thinkingOf({ reasoning: { effort: "low" } }, 10_000)).toEqual({ type: "enabled", budget_tokens: 2000 });
  });

  it("is off for a budget of 0, enabled: false, effort none, or no reasoning asked", () => {
    expect(thinkingOf({ max_tokens: 4000, reasoning: { max_tokens: 0 } })).toBeUndefined();
    expect(thinkingOf({ max_tokens: 4000, reasoning: { enabled: false, max_tokens: 2000 } })).toBeUndefined();
    expect(thinkingOf({ max_tokens: 4000, reasoning_effort: "none" })).toBeUndefined();
    expect(thinkingOf({ max_tokens: 4000, reasoning: { exclude: true } })).toBeUndefined();
    // Without thinking, sampling goes as asked.
    expect(request({ max_tokens: 4000, temperature: 0.5, reasoning: { max_tokens: 0 } }).temperature).toBe(0.5);
  });

  it("refuses a budget Anthropic cannot take, saying what it requires", () => {
    expect(() => thinkingOf({ max_tokens: 500, reasoning: { effort: "high" } })).toThrow(/thinking needs max_tokens above 1024 \(500 given\)/);
    expect(() => thinkingOf({ max_tokens: 1024, reasoning: { max_tokens: 1024 } })).toThrow("reasoning.max_tokens (1024) must be below max_tokens (1024)");
    expect(() => thinkingOf({ max_tokens: 4000, reasoning: { max_tokens: 500 } })).toThrow(/must be 0 \(no thinking\) or at least 1024/);
    expect(() => thinkingOf({ reasoning: { max_tokens: 8000 } }, 4096)).toThrow("reasoning.max_tokens (8000) must be below max_tokens (4096)");
  });
});

describe("Anthropic's max_tokens", () => {
  it("is the explicit limit first, at most the endpoint's maximum, else that maximum", () => {
    expect(request({ max_completion_tokens: 5, max_tokens: 2000 }).max_tokens).toBe(5);
    expect(request({ max_tokens: 10_000 }, 4000).max_tokens).toBe(4000);
    expect(request({ max_tokens: 100 }, 4000).max_tokens).toBe(100);
    expect(request({}, 4000).max_tokens).toBe(4000);
    expect(request({}, null).max_tokens).toBe(4096);
  });

  it("weighs thinking against the limit it sends", () => {
    expect(thinkingOf({ max_tokens: 10_000, reasoning: { effort: "medium" } }, 4000)).toEqual({ type: "enabled", budget_tokens: 2000 });
  });
});

describe("what a Messages request leaves out", () => {
  it("names n above 1: one choice comes back", () => {
    expect(messagesLeftOut({ messages, n: 3 })).toEqual(["n"]);
    expect(messagesLeftOut({ messages, n: 1 })).toEqual([]);
    expect(request({ n: 3 })).not.toHaveProperty("n");
  });
});

describe("an allowed_tools choice, which the Messages API lacks", () => {
  const fn = (name: string) => ({ type: "function", function: { name, parameters: { type: "object" } } });
  const allowed = (mode: string) => ({ type: "allowed_tools", allowed_tools: { mode, tools: [{ type: "function", function: { name: "b" } }] } });

  it("declares only the functions it allows, and requires a call when its mode does", () => {
    const required = request({ tools: [fn("a"), fn("b")], tool_choice: allowed("required") });
    expect((required.tools as Array<{ name: string }>).map((t) => t.name)).toEqual(["b"]);
    expect(required.tool_choice).toEqual({ type: "any" });
    expect(request({ tools: [fn("a"), fn("b")], tool_choice: allowed("auto") }).tool_choice).toEqual({ type: "auto" });
  });
});

