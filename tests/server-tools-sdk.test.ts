import { createServer } from "node:http";
import { OpenRouter } from "@openrouter/sdk";
import type { ChatAssistantMessage, ChatResult, ReasoningDetailServerToolCall, ReasoningDetailUnion } from "@openrouter/sdk/models";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { agentCatalog, startFakeAgent, toolResults, type FakeAgent, type Script } from "./support/fake-agent.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";
import { listenLocal } from "./support/listen.js";

let gw: TestGateway;
let agent: FakeAgent;
let search: { baseUrl: string; stop(): Promise<void> };
let client: OpenRouter;
let key: string;

const toolsOff = (body: { tool_choice?: unknown }) => body.tool_choice === "none";

const scripts: Record<string, Script> = {
  // Asks the time, with a word each turn, until told it may not.
  forever: (body) =>
    toolsOff(body) ? { content: `done after ${toolResults(body.messages).length} results` } : { content: "Checking. ", calls: [{ name: "datetime", arguments: { timezone: "UTC" } }] },
  // Asks once; with a result anywhere in the conversation, it answers from it.
  once: (body) => {
    const results = toolResults(body.messages);
    return results.length ? { content: `It is ${String(results[0]!.datetime ?? "unknown")}` } : { calls: [{ name: "datetime", arguments: {} }] };
  },
  searcher: (body) => (toolResults(body.messages).length ? { content: "found" } : { calls: [{ name: "web_search", arguments: { query: "switchyard" } }] }),
};

beforeAll(async () => {
  agent = await startFakeAgent(scripts);
  const searchServer = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ results: [{ title: "Docs", url: "https://docs.switchyard.dev/a", content: "a" }, { title: "Other", url: "https://example.com/b", content: "b" }] }));
  });
  const listening = await listenLocal(searchServer);
  search = { baseUrl: listening.baseUrl.replace(/\/v1$/, ""), stop: listening.stop };
  const catalog = agentCatalog(agent, Object.keys(scripts));
  gw = await startTestGateway({ ...(await catalogEnv(catalog)), FAKE_AGENT_KEY: "agent-secret", WEB_SEARCH_URL: search.baseUrl, SERVER_TOOL_MAX_STEPS: "6" });
  key = String((await gw.call("POST", "/keys", { body: { name: "sdk" } })).body.key);
  client = new OpenRouter({ apiKey: key, serverURL: gw.apiUrl });
}, 60_000);
afterAll(async () => {
  await gw?.stop();
  await agent?.stop();
  await search?.stop();
});

const isServerCall = (d: ReasoningDetailUnion): d is ReasoningDetailServerToolCall => d.type === "reasoning.server_tool_call";
const buffered = (result: unknown): ChatResult => {
  if (typeof result === "object" && result !== null && Symbol.asyncIterator in result) throw new Error("expected a buffered completion");
  return result as ChatResult;
};

describe("the agent loop through @openrouter/sdk", () => {
  it("stops at the operator's step limit, whatever maxToolCalls asks", async () => {
    const before = agent.requests.length;
    // The SDK has no field for max_tool_calls; the request is sent as JSON.
    const res = await gw.call("POST", "/chat/completions", {
      key,
      body: { model: "agent/forever", messages: [{ role: "user", content: "Go" }], tools: [{ type: "openrouter:datetime" }], max_tool_calls: 20 },
    });
    expect(res.status).toBe(200);
    expect(agent.requests.length - before).toBe(7); // SERVER_TOOL_MAX_STEPS=6, then the last turn without tools
    expect(res.body.usage).toMatchObject({ server_tool_use_details: { tool_calls_requested: 6, tool_calls_executed: 6 } });
  });

  it("stops on stopServerToolsWhen, and the SDK's parsed answer shows every call and its result", async () => {
    const before = agent.requests.length;
    const result = buffered(
      await client.chat.send({
        chatRequest: { model: "agent/forever", messages: [{ role: "user", content: "Go" }], tools: [{ type: "openrouter:datetime" }], stopServerToolsWhen: [{ type: "step_count_is", stepCount: 2 }] },
      }),
    );
    expect(agent.requests.length - before).toBe(3);
    const message = result.choices[0]!.message;
    // The words of every turn, as the stream would have sent them.
    expect(message.content).toBe("Checking. Checking. done after 2 results");
    const calls = (message.reasoningDetails ?? []).filter(isServerCall);
    expect(calls).toHaveLength(2);
    expect(calls[0]).toMatchObject({ type: "reasoning.server_tool_call", toolName: "openrouter:datetime", arguments: '{"timezone":"UTC"}', index: 0 });
    expect(calls[0]!.toolCallId).toMatch(/^call_/);
    expect(JSON.parse(calls[1]!.result)).toMatchObject({ timezone: "UTC" });
    expect(result.usage?.serverToolUseDetails).toEqual({ toolCallsRequested: 2, toolCallsExecuted: 2 });
  });

  it("streams a loop that stops on a condition: words, each round's calls as reasoning deltas, one finish and the usage", async () => {
    const before = agent.requests.length;
    const stream = await client.chat.send({
      chatRequest: {
        model: "agent/forever",
        stream: true,
        messages: [{ role: "user", content: "Go" }],
        tools: [{ type: "openrouter:datetime" }],
        // Two turns use 30 tokens: the loop stops there, at the threshold, as the SDK's own maxTokensUsed would.
        stopServerToolsWhen: [{ type: "max_tokens_used", maxTokens: 30 }],
      },
    });
    if (!(Symbol.asyncIterator in stream)) throw new Error("expected a stream");
    let text = "";
    const calls: ReasoningDetailServerToolCall[] = [];
    const finishes: string[] = [];
    let usage;
    for await (const chunk of stream) {
      for (const choice of chunk.choices) {
        text += choice.delta.content ?? "";
        calls.push(...(choice.delta.reasoningDetails ?? []).filter(isServerCall));
        if (choice.finishReason) finishes.push(choice.finishReason);
      }
      usage = chunk.usage ?? usage;
    }
    expect(agent.requests.length - before).toBe(3);
    expect(text).toBe("Checking. Checking. done after 2 results");
    expect(calls.map((c) => [c.toolName, c.index])).toEqual([["openrouter:datetime", 0], ["openrouter:datetime", 1]]);
    expect(finishes).toEqual(["stop"]);
    expect(usage?.serverToolUseDetails).toEqual({ toolCallsRequested: 2, toolCallsExecuted: 2 });
  });

  it("takes the answer's message back as the SDK sends it, and runs nothing again", async () => {
    const tools = [{ type: "openrouter:datetime" as const }];
    const first = buffered(await client.chat.send({ chatRequest: { model: "agent/once", messages: [{ role: "user", content: "Time?" }], tools } }));
    const message = first.choices[0]!.message as ChatAssistantMessage;
    const [call] = (message.reasoningDetails ?? []).filter(isServerCall);
    const before = agent.requests.length;
    const again = buffered(await client.chat.send({ chatRequest: { model: "agent/once", messages: [{ role: "user", content: "Time?" }], tools } }));
    expect(again.choices[0]!.message.content).toMatch(/^It is \d{4}-/);
    const follow = buffered(
      await client.chat.send({ chatRequest: { model: "agent/once", messages: [{ role: "user", content: "Time?" }, message, { role: "user", content: "And now?" }], tools } }),
    );
    // One upstream turn for `again` (two), one for the follow-up: the replayed call was read, not run.
    expect(agent.requests.length - before).toBe(3);
    expect(follow.usage?.serverToolUseDetails).toEqual({ toolCallsRequested: 0, toolCallsExecuted: 0 });
    const sent = agent.requests.at(-1)!.messages as Array<Record<string, unknown>>;
    expect(sent.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant", "user"]);
    expect(sent[2]).toEqual({ role: "tool", tool_call_id: call!.toolCallId, content: call!.result });
    expect(follow.choices[0]!.message.content).toBe(`It is ${String(JSON.parse(call!.result).datetime)}`);
  });

  it("applies the SDK's web_search shorthand settings and counts the searches", async () => {
    const result = buffered(
      await client.chat.send({
        chatRequest: {
          model: "agent/searcher",
          messages: [{ role: "user", content: "Find" }],
          tools: [{ type: "web_search_2025_08_26", allowedDomains: ["switchyard.dev"], maxResults: 3 }],
          // The canonical type names the tool whichever form declared it.
          stopServerToolsWhen: [{ type: "has_tool_call", toolName: "openrouter:web_search" }],
        },
      }),
    );
    expect(agent.requests.at(-1)!.tool_choice).toBe("none");
    const [call] = (result.choices[0]!.message.reasoningDetails ?? []).filter(isServerCall);
    expect(call!.toolName).toBe("openrouter:web_search");
    expect((JSON.parse(call!.result) as { results: Array<{ url: string }> }).results.map((r) => r.url)).toEqual(["https://docs.switchyard.dev/a"]);
    expect(result.usage?.serverToolUseDetails).toEqual({ toolCallsRequested: 1, toolCallsExecuted: 1, webSearchRequests: 1 });
  });
});
