import { describe, expect, it } from "vitest";
import { clearedThinking, thinkingTurnsKept } from "./context-editing.js";

describe("thinkingTurnsKept", () => {
  it("reads thinking clearing alone", () => {
    expect(thinkingTurnsKept({ edits: [{ type: "clear_thinking_20251015", keep: "all" }] })).toBe("all");
    expect(thinkingTurnsKept({ edits: [{ type: "clear_thinking_20251015", keep: { type: "thinking_turns", value: 2 } }] })).toBe(2);
  });

  it("leaves other edits, more edits and odd shapes to Anthropic", () => {
    for (const value of [
      { edits: [{ type: "clear_tool_uses_20250919" }] },
      { edits: [{ type: "clear_thinking_20251015", keep: "all" }, { type: "clear_tool_uses_20250919" }] },
      { edits: [{ type: "clear_thinking_20251015", keep: { type: "thinking_turns", value: -1 } }] },
      { edits: [{ type: "clear_thinking_20251015", keep: { type: "thinking_turns", value: 1, extra: true } }] },
      { edits: [{ type: "clear_thinking_20251015", keep: "all", trigger: {} }] },
      { edits: [] },
      {},
      null,
      "all",
    ]) expect(thinkingTurnsKept(value)).toBeUndefined();
  });
});

describe("clearedThinking", () => {
  const turns = [
    { role: "user" as const, content: "q1" },
    { role: "assistant" as const, content: [{ type: "redacted_thinking" as const, data: "r1" }, { type: "tool_use" as const, id: "t1", name: "f", input: {} }] },
    { role: "user" as const, content: "q2" },
    { role: "assistant" as const, content: "a2 without blocks" },
    { role: "assistant" as const, content: [{ type: "thinking" as const, thinking: "t3", signature: "s3" }, { type: "text" as const, text: "a3" }] },
  ];

  it("keeps the thinking of the last turns that hold it", () => {
    const out = clearedThinking(turns, 1);
    expect(out[1]!.content).toEqual([{ type: "tool_use", id: "t1", name: "f", input: {} }]);
    expect(out[4]).toBe(turns[4]);
    expect(clearedThinking(turns, 0)[4]!.content).toEqual([{ type: "text", text: "a3" }]);
    expect(clearedThinking(turns, "all")).toEqual(turns);
  });
});
