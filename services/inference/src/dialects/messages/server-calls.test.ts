import type { ServerToolCallDetail } from "@switchyard/contracts";
import { describe, expect, it } from "vitest";
import { replayedResult, replayedTool, serverCallBlocks } from "./server-calls.js";

const call = (tool_name: string, args: unknown, result: unknown): ServerToolCallDetail => ({
  type: "reasoning.server_tool_call",
  tool_name,
  tool_call_id: "srvtoolu_1",
  arguments: JSON.stringify(args),
  result: typeof result === "string" ? result : JSON.stringify(result),
});

const at = "2026-11-26T21:00:00.000Z";
const found = { query: "Paris", results: [{ title: "Paris", url: "https://a.example/paris", snippet: "The capital." }] };
const page = { url: "https://a.example/p", title: "P", status: 200, content_type: "text/html", content: "Page text." };

describe("serverCallBlocks", () => {
  it("writes a web search as Anthropic's server_tool_use and web_search_tool_result, which Claude Code reads", () => {
    expect(serverCallBlocks(call("openrouter:web_search", { query: "Paris" }, found), at)).toEqual([
      { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: { query: "Paris" } },
      { type: "web_search_tool_result", tool_use_id: "srvtoolu_1", content: [{ type: "web_search_result", url: "https://a.example/paris", title: "Paris", encrypted_content: "The capital.", page_age: null }] },
    ]);
    expect(serverCallBlocks(call("openrouter:web_search", { query: "Paris" }, { error: "no backend" }), at)[1]).toEqual({
      type: "web_search_tool_result",
      tool_use_id: "srvtoolu_1",
      content: { type: "web_search_tool_result_error", error_code: "unavailable" },
    });
  });

  it("writes a web fetch as Anthropic's web_fetch_tool_result with the page's text as a document", () => {
    expect(serverCallBlocks(call("openrouter:web_fetch", { url: page.url }, page), at)).toEqual([
      { type: "server_tool_use", id: "srvtoolu_1", name: "web_fetch", input: { url: page.url } },
      {
        type: "web_fetch_tool_result",
        tool_use_id: "srvtoolu_1",
        content: { type: "web_fetch_result", url: page.url, content: { type: "document", source: { type: "text", media_type: "text/plain", data: "Page text." }, title: "P" }, retrieved_at: at },
      },
    ]);
    expect(serverCallBlocks(call("openrouter:web_fetch", { url: page.url }, { error: "refused" }), at)[1]).toMatchObject({ content: { type: "web_fetch_tool_error", error_code: "unavailable" } });
  });

  it("writes other tools as server_tool_use named by their type and a server_tool_result, the result as JSON where it is", () => {
    expect(serverCallBlocks({ ...call("openrouter:bash", { command: "ls" }, "plain"), tool_call_id: null, id: null, index: 3 }, at)).toEqual([
      { type: "server_tool_use", id: "srvtoolu_3", name: "openrouter:bash", input: { command: "ls" } },
      { type: "server_tool_result", tool_use_id: "srvtoolu_3", content: "plain" },
    ]);
  });
});

describe("replay", () => {
  it("reads what each result block said back as the text the model read", () => {
    const [, search] = serverCallBlocks(call("openrouter:web_search", { query: "Paris" }, found), at);
    expect(JSON.parse(replayedResult(search))).toEqual({ results: [{ title: "Paris", url: "https://a.example/paris", snippet: "The capital." }] });
    const [, fetched] = serverCallBlocks(call("openrouter:web_fetch", { url: page.url }, page), at);
    expect(JSON.parse(replayedResult(fetched))).toEqual({ url: page.url, title: "P", content: "Page text." });
    const [, other] = serverCallBlocks(call("openrouter:datetime", {}, { datetime: "now" }), at);
    expect(replayedResult(other)).toBe('{"datetime":"now"}');
  });

  it("names the gateway's tool a server_tool_use block sent back stands for", () => {
    expect(["web_search", "web_fetch", "openrouter:bash", "code_execution", 7].map(replayedTool)).toEqual(["openrouter:web_search", "openrouter:web_fetch", "openrouter:bash", undefined, undefined]);
  });
});
