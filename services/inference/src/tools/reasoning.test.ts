import { describe, expect, it } from "vitest";
import { DetailNumbering, mergeDetails, type Detail } from "./reasoning.js";
import { replayServerCalls } from "./replay.js";
import type { ToolRun } from "./run.js";

const run = (id: string, output = '{"ok":true}'): ToolRun => ({ id, kind: "datetime", name: "datetime", arguments: "{}", output, executed: true });

describe("streamed reasoning", () => {
  it("joins the pieces of one block and keeps blocks of other indexes or types apart", () => {
    const turn: Detail[] = [];
    mergeDetails(turn, [{ type: "reasoning.text", text: "Ask ", format: "anthropic-claude-v1", index: 0 }]);
    mergeDetails(turn, [{ type: "reasoning.text", text: "the clock.", index: 0 }]);
    mergeDetails(turn, [{ type: "reasoning.text", signature: "sig", index: 0 }, { type: "reasoning.encrypted", data: "enc", index: 1 }]);
    mergeDetails(turn, [{ type: "reasoning.summary", summary: "s", index: 0 }, "not an entry", { no: "type" }]);
    expect(turn).toEqual([
      { type: "reasoning.text", text: "Ask the clock.", signature: "sig", format: "anthropic-claude-v1", index: 0 },
      { type: "reasoning.encrypted", data: "enc", index: 1 },
      { type: "reasoning.summary", summary: "s", index: 0 },
    ]);
  });

  it("numbers each turn's entries, and the calls between them, past the earlier ones", () => {
    const numbering = new DetailNumbering();
    expect(numbering.renumber([{ type: "reasoning.text", index: 0 }, { type: "reasoning.text", index: 1 }]).map((d) => d.index)).toEqual([0, 1]);
    numbering.endTurn();
    expect(numbering.serverCalls([run("a"), run("b")]).map((d) => [d.tool_call_id, d.index])).toEqual([["a", 2], ["b", 3]]);
    expect(numbering.renumber([{ type: "reasoning.text", index: 0 }, { type: "reasoning.text" }]).map((d) => d.index)).toEqual([4, undefined]);
    numbering.endTurn();
    expect(numbering.serverCalls([run("c")])[0]).toEqual({ type: "reasoning.server_tool_call", tool_name: "openrouter:datetime", tool_call_id: "c", arguments: "{}", result: '{"ok":true}', index: 5 });
  });
});

describe("replaying server tool calls sent back", () => {
  const call = (id: string, index: number) => ({ type: "reasoning.server_tool_call", tool_name: "openrouter:web_search", tool_call_id: id, arguments: '{"query":"q"}', result: `{"r":"${id}"}`, index });
  const thinking = (text: string, index: number) => ({ type: "reasoning.text", text, signature: `sig-${text}`, index });

  it("gives each round its reasoning, its calls and their results, then the words with the last reasoning", () => {
    const message = { role: "assistant", content: "Done.", reasoning: "all", reasoning_details: [thinking("one", 0), call("c1", 1), thinking("two", 2), call("c2", 3), call("c3", 4), thinking("three", 5)] };
    expect(replayServerCalls([{ role: "user", content: "Go" }, message])).toEqual([
      { role: "user", content: "Go" },
      { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "web_search", arguments: '{"query":"q"}' } }], reasoning_details: [thinking("one", 0)] },
      { role: "tool", tool_call_id: "c1", content: '{"r":"c1"}' },
      { role: "assistant", content: null, tool_calls: ["c2", "c3"].map((id) => ({ id, type: "function", function: { name: "web_search", arguments: '{"query":"q"}' } })), reasoning_details: [thinking("two", 2)] },
      { role: "tool", tool_call_id: "c2", content: '{"r":"c2"}' },
      { role: "tool", tool_call_id: "c3", content: '{"r":"c3"}' },
      { role: "assistant", content: "Done.", reasoning: "all", reasoning_details: [thinking("three", 5)] },
    ]);
  });

  it("keeps the client's own calls in the turn that made them, beside the server's", () => {
    const own = { id: "own_1", type: "function", function: { name: "lookup", arguments: "{}" } };
    const message = { role: "assistant", content: "Checking.", tool_calls: [own], reasoning_details: [thinking("one", 0), call("c1", 1)] };
    const [assistant, result] = replayServerCalls([message]);
    expect(assistant).toEqual({ role: "assistant", content: "Checking.", tool_calls: [expect.objectContaining({ id: "c1" }), own], reasoning_details: [thinking("one", 0)] });
    expect(result).toEqual({ role: "tool", tool_call_id: "c1", content: '{"r":"c1"}' });
  });

  it("leaves other messages alone and names a tool this gateway does not run legally", () => {
    const plain = { role: "assistant", content: "Hi", reasoning_details: [thinking("one", 0)] };
    expect(replayServerCalls([plain])).toEqual([plain]);
    const foreign = { role: "assistant", content: "x", reasoning_details: [{ type: "reasoning.server_tool_call", tool_name: "openrouter:fusion", arguments: "{}", result: "{}" }] };
    expect(replayServerCalls([foreign])[0]).toMatchObject({ tool_calls: [{ id: "call_replayed_0", function: { name: "fusion" } }] });
  });
});
