import type { Message, MessageStreamEvent } from "@anthropic-ai/sdk/resources/messages";
import { MessageStream } from "@anthropic-ai/sdk/lib/MessageStream";
import { Stream } from "@anthropic-ai/sdk/core/streaming";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cachedPrefixTokens, greeting, signature, thinkingPieces } from "./support/fake-anthropic.js";
import { endpointKey, startMessagesGateway, type MessagesFixture } from "./support/messages-fixture.js";

/**
 * Claude Code pointed at the gateway (ANTHROPIC_BASE_URL=<gateway>/api): the requests it sends on start and
 * through one tool-using turn, with its headers, as captured from Claude Code 2.0 talking to Anthropic. Its
 * SDK appends `?beta=true` to the path; the small fast model answers a one-token quota check and a topic
 * check, then the default model gets the streamed turn with the system prompt, the tools and thinking, and
 * the turn that carries the tool's result back.
 */

type Json = Record<string, unknown>;

let fx: MessagesFixture;

beforeAll(async () => {
  fx = await startMessagesGateway();
});
afterAll(async () => {
  await fx?.stop();
});

const sonnet = "claude-sonnet-4-5-20250929";
const haiku = "claude-3-5-haiku-20241022";
const userId = "user_9c2f0d6b4e1a8f3c7d5e2b0a6c4f1e8d9b7a5c3e1f0d2b4a6c8e0f1a3b5c7d9e_account__session_5d1e3b7a-2c4f-4e6a-9b8d-0f1e2d3c4b5a";
const betas = "claude-code-20250219,interleaved-thinking-2025-05-14,fine-grained-tool-streaming-2025-05-14";

/** The headers Claude Code sends: its CLI's user agent, its betas, the Stainless SDK's own. */
function claudeCodeHeaders(credential: Record<string, string>, options: { beta?: string; stream?: boolean } = {}): Record<string, string> {
  return {
    accept: "application/json",
    "accept-encoding": "gzip, deflate, br, zstd",
    "anthropic-beta": options.beta ?? betas,
    "anthropic-dangerous-direct-browser-access": "true",
    "anthropic-version": "2023-06-01",
    "content-type": "application/json",
    "user-agent": "claude-cli/2.0.14 (external, cli)",
    "x-app": "cli",
    "x-stainless-arch": "x64",
    "x-stainless-lang": "js",
    "x-stainless-os": "Linux",
    "x-stainless-package-version": "0.60.0",
    "x-stainless-retry-count": "0",
    "x-stainless-runtime": "node",
    "x-stainless-runtime-version": "v22.19.0",
    "x-stainless-timeout": "600",
    ...(options.stream ? { "x-stainless-helper-method": "stream" } : {}),
    ...credential,
  };
}

/** A tool as Claude Code declares it: a JSON Schema (draft 7) that admits nothing undeclared. */
const tool = (name: string, description: string, properties: Json, required: string[]) => ({
  name,
  description,
  input_schema: { type: "object", properties, required, additionalProperties: false, $schema: "http://json-schema.org/draft-07/schema#" },
});
const str = (description: string) => ({ type: "string", description });
const tools = [
  tool("Task", "Launch a new agent to handle complex, multi-step tasks autonomously.", { description: str("A short task description"), prompt: str("The task for the agent"), subagent_type: str("The agent to use") }, ["description", "prompt", "subagent_type"]),
  tool("Bash", "Executes a given bash command in a persistent shell session.", { command: str("The command to execute"), timeout: { type: "number", description: "Optional timeout in milliseconds" }, run_in_background: { type: "boolean" } }, ["command"]),
  tool("Glob", "Fast file pattern matching tool that works with any codebase size.", { pattern: str("The glob pattern"), path: str("The directory to search in") }, ["pattern"]),
  tool("Grep", "A powerful search tool built on ripgrep.", { pattern: str("The regular expression"), path: str("File or directory"), output_mode: { type: "string", enum: ["content", "files_with_matches", "count"] }, "-i": { type: "boolean" } }, ["pattern"]),
  tool("Read", "Reads a file from the local filesystem.", { file_path: str("The absolute path to the file to read"), offset: { type: "number" }, limit: { type: "number" } }, ["file_path"]),
  tool("Edit", "Performs exact string replacements in files.", { file_path: str("The absolute path"), old_string: str("The text to replace"), new_string: str("The replacement"), replace_all: { type: "boolean", default: false } }, ["file_path", "old_string", "new_string"]),
  tool("Write", "Writes a file to the local filesystem.", { file_path: str("The absolute path"), content: str("The content to write") }, ["file_path", "content"]),
  tool("WebFetch", "Fetches content from a specified URL and processes it.", { url: { type: "string", format: "uri" }, prompt: str("What to extract") }, ["url", "prompt"]),
  tool("TodoWrite", "Create and manage a structured task list.", { todos: { type: "array", items: { type: "object", properties: { content: { type: "string", minLength: 1 }, status: { type: "string", enum: ["pending", "in_progress", "completed"] }, activeForm: { type: "string" } }, required: ["content", "status", "activeForm"], additionalProperties: false } } }, ["todos"]),
  tool("WebSearch", "Search the web and use the results to inform responses.", { query: { type: "string", minLength: 2 }, allowed_domains: { type: "array", items: { type: "string" } } }, ["query"]),
];
const system = [
  { type: "text", text: "You are Claude Code, Anthropic's official CLI for Claude.", cache_control: { type: "ephemeral" } },
  { type: "text", text: `\nYou are an interactive CLI tool that helps users with software engineering tasks.\n${"Follow the repository's conventions. ".repeat(300)}`, cache_control: { type: "ephemeral" } },
];
const reminder = { type: "text", text: "<system-reminder>\nAs you answer the user's questions, you can use the following context:\n# claudeMd\nUse npm.\n</system-reminder>" };
const ask = { type: "text", text: 'What is this project called? Look: call tool Read with {"file_path":"/repo/package.json"}', cache_control: { type: "ephemeral" } };
const readResult = '{"name":"switchyard","private":true}';

/** Posts a body as Claude Code does: to `/v1/messages?beta=true` under the base URL, with its headers. */
const send = (path: string, body: Json, headers: Record<string, string>) => fetch(`${fx.gw.baseUrl}/api/v1/${path}?beta=true`, { method: "POST", headers, body: JSON.stringify(body) });

/** An SSE body's events, each checked as the Anthropic SDK reads them: an `event:` line naming the data's type. */
function sseEvents(text: string): Json[] {
  const events: Json[] = [];
  for (const frame of text.split("\n\n")) {
    const lines = frame.split("\n").filter((l) => l && !l.startsWith(":"));
    if (lines.length === 0) continue;
    const name = lines.find((l) => l.startsWith("event: "))?.slice(7);
    const data = lines.filter((l) => l.startsWith("data: ")).map((l) => l.slice(6)).join("\n");
    const event = JSON.parse(data) as Json;
    expect(name, data).toBe(event.type);
    events.push(event);
  }
  return events;
}

const blockOf: Record<string, string> = { text_delta: "text", input_json_delta: "tool_use", thinking_delta: "thinking", signature_delta: "thinking" };

/**
 * The stream's outline, checked as Claude Code needs it: message_start first, blocks opened one at a time and
 * numbered from 0, deltas only to the open block and of its kind, message_delta (with usage) after the last
 * block, message_stop last.
 */
function outline(events: Json[]): string[] {
  const out: string[] = [];
  let open: { index: number; type: string } | undefined;
  let next = 0;
  events.forEach((e, i) => {
    const at = `event ${i}: ${JSON.stringify(e)}`;
    if (e.type === "content_block_start") {
      const block = e.content_block as Json;
      expect(open, at).toBeUndefined();
      expect(e.index, at).toBe(next++);
      open = { index: e.index as number, type: String(block.type) };
      out.push(`start ${open.index} ${open.type}`);
    } else if (e.type === "content_block_delta") {
      const delta = e.delta as Json;
      expect(e.index, at).toBe(open?.index);
      expect(blockOf[String(delta.type)], at).toBe(open?.type);
      if (out.at(-1) !== `${delta.type as string} ${e.index as number}`) out.push(`${delta.type as string} ${e.index as number}`);
    } else if (e.type === "content_block_stop") {
      expect(e.index, at).toBe(open?.index);
      open = undefined;
      out.push(`stop ${e.index as number}`);
    } else {
      if (e.type === "message_delta") expect(e.usage, at).toMatchObject({ output_tokens: expect.any(Number) });
      if (e.type === "message_start") expect(e.message, at).toMatchObject({ type: "message", role: "assistant", content: [], stop_reason: null, usage: { input_tokens: expect.any(Number) } });
      out.push(String(e.type));
    }
  });
  expect(open).toBeUndefined();
  return out;
}

/** The message the Anthropic SDK assembles from the same bytes, with its own SSE parser and accumulator. */
async function sdkMessage(text: string): Promise<Message> {
  const events = Stream.fromSSEResponse<MessageStreamEvent>(new Response(text), new AbortController());
  return MessageStream.fromReadableStream(events.toReadableStream()).finalMessage();
}

/** A streamed call: the response, its events and outline, and the message the SDK makes of it. */
async function streamed(body: Json, headers: Record<string, string>) {
  const res = await send("messages", { ...body, stream: true }, headers);
  const text = await res.text();
  expect(res.status, text).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
  const events = sseEvents(text);
  return { res, events, outline: outline(events), message: await sdkMessage(text) };
}

describe("Claude Code through the gateway", () => {
  it("starts up and runs a tool-using turn as it does against Anthropic", async () => {
    const headers = (options?: { beta?: string; stream?: boolean }) => claudeCodeHeaders({ "x-api-key": fx.key }, options);
    const upstream = () => fx.claude.requests.at(-1)!;

    // 1. The quota check: one token of the small fast model, buffered.
    const quota = await send("messages", { model: haiku, max_tokens: 1, messages: [{ role: "user", content: "quota" }], metadata: { user_id: userId } }, headers({ beta: "claude-code-20250219,fine-grained-tool-streaming-2025-05-14" }));
    expect(quota.status).toBe(200);
    const checked = (await quota.json()) as Message;
    expect(checked).toMatchObject({ type: "message", role: "assistant", content: [{ type: "text", text: greeting.split(" ")[0] }], stop_reason: "max_tokens", usage: { output_tokens: 1 } });
    expect(quota.headers.get("request-id")).toBe(checked.id);
    expect(upstream().body).toMatchObject({ model: haiku, max_tokens: 1, stream: false });
    expect(upstream().headers).toMatchObject({ apiKey: endpointKey, version: "2023-06-01", beta: "claude-code-20250219,fine-grained-tool-streaming-2025-05-14" });

    // 2. Whether the first prompt starts a new topic: the small model again, streamed.
    const topicSystem = [{ type: "text", text: "Analyze if this message indicates a new conversation topic. If it does, extract a 2-3 word title that captures the new topic. Format your response as a JSON object with two fields: 'isNewTopic' (boolean) and 'title' (string, or null if isNewTopic is false)." }];
    const topic = await streamed({ model: haiku, max_tokens: 512, temperature: 0, system: topicSystem, messages: [{ role: "user", content: "What is this project called?" }], metadata: { user_id: userId } }, headers({ stream: true }));
    expect(topic.outline).toEqual(["message_start", "ping", "start 0 text", "text_delta 0", "stop 0", "message_delta", "message_stop"]);
    expect(topic.message.content).toEqual([{ type: "text", text: greeting }]);
    expect(upstream().body.model).toBe(haiku);

    // 3. The turn: the default model, streamed, with the system prompt, the tools and thinking.
    const turn = { model: sonnet, max_tokens: 32000, temperature: 1, system, tools, metadata: { user_id: userId }, thinking: { type: "enabled", budget_tokens: 31999 } };
    const first = [{ role: "user", content: [reminder, ask] }];
    const main = await streamed({ ...turn, messages: first }, headers({ stream: true }));
    expect(main.outline).toEqual([
      "message_start",
      "ping",
      "start 0 thinking",
      "thinking_delta 0",
      "signature_delta 0",
      "stop 0",
      "start 1 text",
      "text_delta 1",
      "stop 1",
      "start 2 tool_use",
      "input_json_delta 2",
      "stop 2",
      "message_delta",
      "message_stop",
    ]);
    expect(main.message.content).toEqual([
      { type: "thinking", thinking: thinkingPieces.join(""), signature },
      { type: "text", text: "I'll call Read." },
      { type: "tool_use", id: "toolu_fake_1", name: "Read", input: { file_path: "/repo/package.json" } },
    ]);
    expect(main.message).toMatchObject({ stop_reason: "tool_use", usage: { input_tokens: 12, cache_creation_input_tokens: cachedPrefixTokens, cache_read_input_tokens: 0 } });
    expect(main.res.headers.get("request-id")).toBe(main.message.id);
    const sent = upstream();
    expect(sent.body).toMatchObject({ model: sonnet, max_tokens: 32000, temperature: 1, stream: true, thinking: turn.thinking });
    expect(sent.raw).toContain(`"system":${JSON.stringify(system)}`);
    expect(sent.raw).toContain(`"tools":${JSON.stringify(tools)}`);
    expect(sent.raw).toContain(`"messages":${JSON.stringify(first)}`);
    expect(sent.headers).toMatchObject({ apiKey: endpointKey, version: "2023-06-01", beta: betas });

    // 4. The tool's result, with the answer so far as the SDK assembled it; the cache marker moves to the end.
    const second = [
      { role: "user", content: [reminder, { ...ask, cache_control: undefined }] },
      { role: "assistant", content: main.message.content },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_fake_1", content: readResult, cache_control: { type: "ephemeral" } }] },
    ];
    const result = await streamed({ ...turn, messages: second }, headers({ stream: true }));
    expect(result.outline).toEqual(["message_start", "ping", "start 0 thinking", "thinking_delta 0", "signature_delta 0", "stop 0", "start 1 text", "text_delta 1", "stop 1", "message_delta", "message_stop"]);
    expect(result.message.content.at(-1)).toEqual({ type: "text", text: `The tool said: ${readResult}` });
    // The system prompt and tools came back unchanged: Anthropic reads them from the cache written by the turn.
    expect(result.message).toMatchObject({ stop_reason: "end_turn", usage: { cache_read_input_tokens: cachedPrefixTokens, cache_creation_input_tokens: cachedPrefixTokens } });
    expect(upstream().raw).toContain(`"messages":${JSON.stringify(second)}`);
  });

  it("takes its key as a Bearer token (ANTHROPIC_AUTH_TOKEN) and answers a bad one as Anthropic does", async () => {
    const body = { model: haiku, max_tokens: 1, messages: [{ role: "user", content: "quota" }] };
    const ok = await send("messages", body, claudeCodeHeaders({ authorization: `Bearer ${fx.key}` }));
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as Message).stop_reason).toBe("max_tokens");
    expect(fx.claude.requests.at(-1)!.headers).toMatchObject({ apiKey: endpointKey, authorization: undefined });
    const refused = await send("messages", body, claudeCodeHeaders({ authorization: "Bearer sk-ant-oat01-not-ours" }));
    expect(refused.status).toBe(401);
    expect(await refused.json()).toEqual({ type: "error", error: { type: "authentication_error", message: expect.any(String) } });
  });

  it("counts a conversation's tokens on the beta path, as /context does", async () => {
    const res = await send("messages/count_tokens", { model: sonnet, system, tools, messages: [{ role: "user", content: [reminder, ask] }] }, claudeCodeHeaders({ "x-api-key": fx.key }, { beta: "token-counting-2024-11-01" }));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ input_tokens: fx.claude.countedTokens });
    expect(fx.claude.requests.at(-1)!).toMatchObject({ path: "/v1/messages/count_tokens", body: { model: sonnet } });
  });
});
