import type { CompletionCreateParamsNonStreaming } from "openai/resources/completions";
import { describe, expect, it } from "vitest";
import { chatCompletionRequest, completionsRequest, type CompletionsRequest, type CompletionsRequestInput } from "@switchyard/contracts";
import { endUser } from "@switchyard/upstream";
import { parseInput } from "@switchyard/runtime";
import { upstreamBody } from "../../request-body.js";
import { carriesSystemPrompt, legacyBody, promptText, toChatRequest, translationRefusals } from "./request.js";

/** Parses a body as the route will, throwing the 400 it would answer. */
const parse = (body: unknown) => parseInput(completionsRequest, body, "body");

/** The message of the 400 a body is refused with. */
function refusal(body: unknown): string {
  try {
    parse(body);
  } catch (error) {
    expect((error as { status?: number }).status).toBe(400);
    return (error as Error).message;
  }
  throw new Error("the body was accepted");
}

const full: CompletionsRequestInput = {
  model: "openai/gpt-3.5-turbo-instruct",
  models: ["mistralai/mistral-7b"],
  prompt: ["Once upon a time"],
  suffix: "The end.",
  max_tokens: 64,
  temperature: 0.7,
  top_p: 0.9,
  top_k: 40,
  top_a: 0.1,
  min_p: 0.05,
  frequency_penalty: 0.5,
  presence_penalty: -0.5,
  repetition_penalty: 1.1,
  n: 1,
  best_of: 1,
  stream: true,
  stream_options: { include_usage: true },
  stop: ["\n\n", "THE END"],
  echo: true,
  logprobs: 3,
  logit_bias: { "50256": -100 },
  seed: 7,
  response_format: { type: "json_object" },
  user: "alice",
  metadata: { team: "north" },
  provider: { order: ["openai"], allow_fallbacks: false },
  reasoning: { effort: "low" },
  session_id: "s-1",
  trace: { trace_id: "t-1" },
  transforms: ["middle-out"],
};

describe("completionsRequest", () => {
  it("accepts every field of the dialect", () => {
    expect(parse(full)).toMatchObject({ prompt: ["Once upon a time"], logprobs: 3, stream: true });
  });

  it("accepts what OpenAI's SDK sends, nulls included", () => {
    const sent: CompletionCreateParamsNonStreaming = { model: "openai/gpt-3.5-turbo-instruct", prompt: "Say this is a test", max_tokens: 7, temperature: null, stop: null, logprobs: null, stream: null };
    expect(parse(sent)).toMatchObject({ prompt: "Say this is a test", max_tokens: 7, stream: null });
    expect(parse({ prompt: "x" }).stream).toBe(false);
  });

  it("refuses unknown fields, naming them", () => {
    expect(refusal({ prompt: "x", messages: [], tools: [] })).toBe("Invalid body: unknown fields messages, tools");
  });

  it("refuses several prompts, token-id prompts and a missing prompt", () => {
    expect(refusal({ prompt: ["a", "b"] })).toMatch(/prompt: must be one prompt/);
    expect(refusal({ prompt: [] })).toMatch(/prompt: must be one prompt/);
    expect(refusal({ prompt: [1, 2, 3] })).toMatch(/prompt: token-id prompts are not supported/);
    expect(refusal({ prompt: [[1, 2]] })).toMatch(/prompt: token-id prompts are not supported/);
    expect(refusal({ prompt: null })).toMatch(/^Invalid body: prompt:/);
    expect(refusal({ model: "openai/gpt-3.5-turbo-instruct" })).toMatch(/^Invalid body: prompt:/);
  });

  it("refuses more than one choice or candidate", () => {
    expect(refusal({ prompt: "x", n: 2 })).toMatch(/^Invalid body: n: only 1 is supported/);
    expect(refusal({ prompt: "x", best_of: 3 })).toMatch(/^Invalid body: best_of: only 1 is supported/);
  });

  it("holds the legacy limits of logprobs and stop", () => {
    expect(refusal({ prompt: "x", logprobs: 6 })).toMatch(/^Invalid body: logprobs:/);
    expect(refusal({ prompt: "x", stop: ["a", "b", "c", "d", "e"] })).toMatch(/stop: must have at most 4 stop sequences/);
    expect(refusal({ prompt: "x", max_tokens: 0 })).toMatch(/^Invalid body: max_tokens:/);
  });
});

describe("promptText", () => {
  it("reads a string or an array of one string", () => {
    expect(promptText(parse({ prompt: "a" }))).toBe("a");
    expect(promptText(parse({ prompt: ["b"] }))).toBe("b");
  });
});

describe("toChatRequest", () => {
  it("makes the prompt one user message, the suffix a second one, and carries the shared fields", () => {
    const chat = toChatRequest(parse(full));
    expect(chat).toEqual({
      messages: [
        { role: "user", content: "Once upon a time" },
        { role: "user", content: "The end." },
      ],
      model: "openai/gpt-3.5-turbo-instruct",
      models: ["mistralai/mistral-7b"],
      max_tokens: 64,
      temperature: 0.7,
      top_p: 0.9,
      top_k: 40,
      top_a: 0.1,
      min_p: 0.05,
      frequency_penalty: 0.5,
      presence_penalty: -0.5,
      repetition_penalty: 1.1,
      seed: 7,
      stop: ["\n\n", "THE END"],
      logit_bias: { "50256": -100 },
      response_format: { type: "json_object" },
      user: "alice",
      metadata: { team: "north" },
      provider: { order: ["openai"], allow_fallbacks: false },
      reasoning: { effort: "low" },
      session_id: "s-1",
      trace: { trace_id: "t-1" },
      transforms: ["middle-out"],
      stream: true,
    });
  });

  it("is a valid chat request, and leaves nulls out", () => {
    const chat = toChatRequest(parse({ prompt: "Hi", temperature: null, stop: null, stream: null }));
    expect(chat).toEqual({ messages: [{ role: "user", content: "Hi" }], stream: false });
    expect(chatCompletionRequest.safeParse(chat).success).toBe(true);
    expect(chatCompletionRequest.parse(toChatRequest(parse(full)))).toMatchObject({ max_tokens: 64, stream: true });
  });
});

describe("legacyBody", () => {
  const chatBody = (request: CompletionsRequest) => upstreamBody(chatCompletionRequest.parse(toChatRequest(request)), "ws-1");

  it("sends the legacy fields, reasoning and the hashed end user of the chat body an endpoint would get; gateway fields stay home", () => {
    const request = parse(full);
    expect(legacyBody(request, chatBody(request))).toEqual({
      prompt: "Once upon a time",
      suffix: "The end.",
      max_tokens: 64,
      temperature: 0.7,
      top_p: 0.9,
      top_k: 40,
      top_a: 0.1,
      min_p: 0.05,
      frequency_penalty: 0.5,
      presence_penalty: -0.5,
      repetition_penalty: 1.1,
      n: 1,
      best_of: 1,
      stop: ["\n\n", "THE END"],
      echo: true,
      logprobs: 3,
      logit_bias: { "50256": -100 },
      seed: 7,
      response_format: { type: "json_object" },
      user: endUser("ws-1", "alice"),
      reasoning: { effort: "low" },
    });
  });

  it("sends reasoning as OpenRouter's legacy route takes it, a preset's reasoning_effort too, and none the endpoint dropped", () => {
    const request = parse({ prompt: "x", reasoning: { max_tokens: 200, exclude: true } });
    expect(legacyBody(request, chatBody(request))).toEqual({ prompt: "x", reasoning: { max_tokens: 200, exclude: true } });
    expect(legacyBody(parse({ prompt: "x" }), { messages: [{ role: "user", content: "x" }], reasoning_effort: "high" })).toEqual({ prompt: "x", reasoning: { effort: "high" } });
    expect(legacyBody(parse({ prompt: "x", reasoning: { effort: "high" } }), { messages: [{ role: "user", content: "x" }] })).toEqual({ prompt: "x" });
  });

  it("sends the prompt as given, never a system message the chat body holds", () => {
    const request = parse({ prompt: "Once upon", suffix: " the end" });
    const withSystem = upstreamBody(chatCompletionRequest.parse(toChatRequest(request)), "ws-1", "SECRET SYSTEM PROMPT");
    expect(carriesSystemPrompt(withSystem)).toBe(true);
    expect(carriesSystemPrompt(chatBody(request))).toBe(false);
    expect(legacyBody(request, withSystem)).toEqual({ prompt: "Once upon", suffix: " the end" });
  });

  it("takes the prompt as the chat body has it, after the guardrails' redactions", () => {
    const request = parse({ prompt: "mail me at a@b.example" });
    expect(legacyBody(request, { messages: [{ role: "user", content: "mail me at [EMAIL]" }], temperature: 0.2 })).toEqual({ prompt: "mail me at [EMAIL]", temperature: 0.2 });
  });

  it("keeps logprobs 0, which asks for the chosen tokens' logprobs", () => {
    const request = parse({ prompt: "x", logprobs: 0, echo: false });
    expect(legacyBody(request, chatBody(request))).toEqual({ prompt: "x", logprobs: 0, echo: false });
  });
});

describe("translationRefusals", () => {
  it("names suffix and logprobs, which chat cannot carry", () => {
    expect(translationRefusals(parse(full))).toEqual(["suffix", "logprobs"]);
    expect(translationRefusals(parse({ prompt: "x", logprobs: 0 }))).toEqual(["logprobs"]);
  });

  it("refuses nothing the gateway can render itself", () => {
    expect(translationRefusals(parse({ prompt: "x", echo: true, suffix: "", logprobs: null, logit_bias: { "1": 2 }, seed: 1 }))).toEqual([]);
  });
});
