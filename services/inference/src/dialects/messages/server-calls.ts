import type { ServerToolCallDetail } from "@switchyard/contracts";
import { objectOf, record, text } from "../../json.js";

type Json = Record<string, unknown>;

const parsed = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
};


/**
 * A web search's results in Anthropic's `web_search_tool_result` block, which Claude Code's WebSearch reads
 * (it counts the searches and lists the links). The gateway's search has no encrypted page content: each
 * result's snippet stands in its `encrypted_content`, which is opaque to clients.
 */
function searchResult(id: string, result: Json): Json {
  if (!Array.isArray(result.results)) return { type: "web_search_tool_result", tool_use_id: id, content: { type: "web_search_tool_result_error", error_code: "unavailable" } };
  const content = result.results.map((r: unknown) => {
    const found = record(r);
    return { type: "web_search_result", url: text(found.url), title: text(found.title), encrypted_content: text(found.snippet), page_age: null };
  });
  return { type: "web_search_tool_result", tool_use_id: id, content };
}

/** A fetched page in Anthropic's `web_fetch_tool_result` block: its text as a document. */
function fetchResult(id: string, result: Json, at: string): Json {
  if (typeof result.content !== "string") return { type: "web_fetch_tool_result", tool_use_id: id, content: { type: "web_fetch_tool_error", error_code: "unavailable" } };
  const document = { type: "document", source: { type: "text", media_type: "text/plain", data: result.content }, ...(result.title ? { title: text(result.title) } : {}) };
  return { type: "web_fetch_tool_result", tool_use_id: id, content: { type: "web_fetch_result", url: text(result.url), content: document, retrieved_at: at } };
}

/**
 * A server tool call the gateway ran, as the two blocks that say what was called and what it returned: web
 * search and web fetch in Anthropic's own blocks (`server_tool_use` named `web_search` or `web_fetch`, then
 * its `web_search_tool_result` or `web_fetch_tool_result`), other tools as `server_tool_use` named by their
 * type and a `server_tool_result` with the result the model read.
 */
export function serverCallBlocks(call: ServerToolCallDetail, at = new Date().toISOString()): [Json, Json] {
  const id = call.tool_call_id ?? call.id ?? `srvtoolu_${call.index ?? 0}`;
  const input = objectOf(call.arguments);
  const result = parsed(call.result);
  if (call.tool_name === "openrouter:web_search") return [{ type: "server_tool_use", id, name: "web_search", input }, searchResult(id, record(result))];
  if (call.tool_name === "openrouter:web_fetch") return [{ type: "server_tool_use", id, name: "web_fetch", input }, fetchResult(id, record(result), at)];
  return [
    { type: "server_tool_use", id, name: call.tool_name, input },
    { type: "server_tool_result", tool_use_id: id, content: result },
  ];
}

/** The gateway's server tool a `server_tool_use` block sent back names, as the type it was declared as. */
export function replayedTool(name: unknown): string | undefined {
  if (name === "web_search" || name === "web_fetch") return `openrouter:${name}`;
  return typeof name === "string" && name.startsWith("openrouter:") ? name : undefined;
}

/** Block types that say what a server tool call returned. */
export const resultTypes = new Set(["server_tool_result", "web_search_tool_result", "web_fetch_tool_result"]);

/** What a result block sent back says, as the text the model read then (the results, the page, or the error). */
export function replayedResult(block: Json): string {
  const content = block.content;
  if (block.type === "web_search_tool_result" && Array.isArray(content)) {
    return JSON.stringify({ results: content.map((r: unknown) => ({ title: text(record(r).title), url: text(record(r).url), snippet: text(record(r).encrypted_content) })) });
  }
  const fetched = record(content);
  if (block.type === "web_fetch_tool_result" && fetched.type === "web_fetch_result") {
    const document = record(fetched.content);
    return JSON.stringify({ url: text(fetched.url), title: text(document.title), content: text(record(document.source).data) });
  }
  return typeof content === "string" ? content : JSON.stringify(content ?? null);
}
