import { UpstreamError } from "@switchyard/upstream";
import { describe, expect, it } from "vitest";
import { openAiBody } from "./openai-compatible.js";

const messages = [{ role: "user", content: "Hi" }];

describe("OpenAI's own Chat Completions body", () => {
  it("sends the output limit as max_completion_tokens, the explicit one first", () => {
    expect(openAiBody({ messages, max_tokens: 100 }, null)).toEqual({ messages, max_completion_tokens: 100 });
    expect(openAiBody({ messages, max_tokens: 100, max_completion_tokens: 70 }, null)).toEqual({ messages, max_completion_tokens: 70 });
    expect(openAiBody({ messages, temperature: 1 }, 4096)).toEqual({ messages, temperature: 1 });
  });

  it("sends reasoning as reasoning_effort alone", () => {
    expect(openAiBody({ messages, reasoning: { effort: "high" }, reasoning_effort: "high" }, null)).toEqual({ messages, reasoning_effort: "high" });
    expect(openAiBody({ messages, reasoning_effort: "xhigh" }, null)).toEqual({ messages, reasoning_effort: "xhigh" });
    expect(openAiBody({ messages, reasoning: { exclude: true } }, null)).toEqual({ messages });
    expect(openAiBody({ messages, reasoning: { enabled: true }, reasoning_effort: null }, null)).toEqual({ messages });
  });

  it("turns reasoning off for enabled: false or a budget of 0", () => {
    expect(openAiBody({ messages, reasoning: { enabled: false } }, null).reasoning_effort).toBe("none");
    expect(openAiBody({ messages, reasoning: { max_tokens: 0 } }, null).reasoning_effort).toBe("none");
    expect(openAiBody({ messages, reasoning: { enabled: false, effort: "high" } }, null).reasoning_effort).toBe("none");
  });

  it("asks for the effort whose share of the output limit is nearest a reasoning budget", () => {
    const effort = (budget: number, limit: Record<string, number>, endpoint: number | null = null) =>
      openAiBody({ messages, reasoning: { max_tokens: budget }, ...limit }, endpoint).reasoning_effort;
    expect(effort(500, { max_completion_tokens: 10_000 })).toBe("minimal");
    expect(effort(2000, { max_completion_tokens: 10_000 })).toBe("low");
    expect(effort(4000, { max_tokens: 10_000 })).toBe("medium");
    expect(effort(8000, { max_completion_tokens: 10_000 })).toBe("high");
    expect(effort(9900, { max_completion_tokens: 10_000 })).toBe("high");
    // Without a limit in the request, the endpoint's own is the whole.
    expect(effort(64_000, {}, 128_000)).toBe("medium");
  });

  it("refuses an effort OpenAI does not take, and a budget it cannot weigh", () => {
    const refusal = (body: Record<string, unknown>) => {
      try {
        openAiBody({ messages, ...body }, null);
      } catch (error) {
        return error;
      }
      throw new Error("expected a refusal");
    };
    const max = refusal({ reasoning_effort: "max" });
    expect(max).toBeInstanceOf(UpstreamError);
    expect(max).toMatchObject({ status: 400, retryable: false, message: 'openai: reasoning effort "max" is not one OpenAI takes; use one of none, minimal, low, medium, high, xhigh' });
    expect(refusal({ reasoning: { max_tokens: 2000 } })).toMatchObject({ status: 400, message: expect.stringContaining("set max_completion_tokens or use reasoning.effort") });
  });
});

describe("the output OpenAI is allowed", () => {
  it("is one limit, at most the endpoint's maximum", () => {
    expect(openAiBody({ messages, max_tokens: 10_000 }, 4000)).toEqual({ messages, max_completion_tokens: 4000 });
    expect(openAiBody({ messages, max_completion_tokens: 5, max_tokens: 2000 }, 4000)).toEqual({ messages, max_completion_tokens: 5 });
  });
});
