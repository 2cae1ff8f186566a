import { describe, expect, it } from "vitest";
import { chatChoice, chatDeltaParts } from "./chat-parts.js";

const thinking = (...texts: string[]) => ({ type: "thinking", thinking: texts.map((text) => ({ type: "text", text })) });
const text = (value: string) => ({ type: "text", text: value });

describe("chatChoice", () => {
  it("reads content given as parts: text parts as the words, thinking parts as the reasoning, other parts left out", () => {
    const choice = chatChoice({ index: 0, finish_reason: "stop", message: { role: "assistant", content: [thinking("Two and two ", "make four."), text("The answer "), { type: "reference", reference_ids: [1] }, text("is 4.")] } }, 0);
    expect(choice).toMatchObject({ text: "The answer is 4.", reasoning: "Two and two make four.", finishReason: "stop" });
    expect(choice.fields).toEqual({ role: "assistant" });
  });

  it("answers null for parts without text or thinking, and keeps a reasoning field over thinking parts", () => {
    expect(chatChoice({ message: { content: [{ type: "reference", reference_ids: [1] }] } }, 0)).toMatchObject({ text: null, reasoning: null });
    expect(chatChoice({ message: { content: [thinking("parts"), text("Hi")], reasoning: "field" } }, 0)).toMatchObject({ text: "Hi", reasoning: "field" });
    expect(chatChoice({ message: { content: "plain" } }, 0)).toMatchObject({ text: "plain", reasoning: null });
  });

  it("keeps a tool call's extra_content, and adds none where the provider sent none", () => {
    const extra = { google: { thought_signature: "c2ln" } };
    const choice = chatChoice(
      {
        message: {
          content: null,
          tool_calls: [
            { id: "call_1", type: "function", function: { name: "a", arguments: "{}" }, extra_content: extra },
            { id: "call_2", type: "function", function: { name: "b", arguments: "{}" } },
          ],
        },
      },
      0,
    );
    expect(choice.toolCalls).toEqual([
      { id: "call_1", type: "function", function: { name: "a", arguments: "{}" }, extra_content: extra },
      { id: "call_2", type: "function", function: { name: "b", arguments: "{}" } },
    ]);
  });
});

describe("chatDeltaParts", () => {
  const parts = (delta: Record<string, unknown>) => chatDeltaParts({ index: 0, delta, finish_reason: null }, 0, new Set()).filter((p) => p.type !== "passthrough");

  it("streams content parts in their order: thinking as reasoning, text as text, other parts left out", () => {
    expect(parts({ content: [thinking("Hmm, "), text("Four"), { type: "reference", reference_ids: [1] }, text(".")] })).toEqual([
      { type: "reasoning", choice: 0, text: "Hmm, " },
      { type: "text", choice: 0, text: "Four" },
      { type: "text", choice: 0, text: "." },
    ]);
    expect(parts({ content: "plain" })).toEqual([{ type: "text", choice: 0, text: "plain" }]);
    expect(parts({ content: null })).toEqual([]);
  });
});
