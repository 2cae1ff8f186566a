import OpenAI from "openai";
import type { Response, ResponseFunctionToolCall, ResponseInputItem, Tool } from "openai/resources/responses/responses";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { startFakeChat, type FakeChat } from "./support/fake-chat-script.js";
import { startFakeResponses, type FakeResponses } from "./support/fake-responses.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";
import { collect, completedOf } from "./support/responses-events.js";

/**
 * Namespace tools on `/responses`, as Codex declares its sub-agent tools: every endpoint gets each function
 * of a namespace as a function tool named `<namespace>__<name>`, and the client gets the model's calls of
 * them back under the function's own name with its namespace.
 */
let gw: TestGateway;
let chat: FakeChat;
let responses: FakeResponses;
let openai: OpenAI;

const closeParams = { type: "object", properties: { id: { type: "string" } }, required: ["id"] };
const agents = {
  type: "namespace",
  name: "multi_agent_v1",
  description: "Tools for spawning and managing sub-agents.",
  tools: [
    { type: "function", name: "close_agent", description: "Close a sub-agent.", strict: false, parameters: closeParams },
    { type: "function", name: "spawn_agent", description: "Start a sub-agent.", strict: false, parameters: { type: "object", properties: {} } },
  ],
} as unknown as Tool;
const shell = { type: "function" as const, name: "shell", description: "Run a command", parameters: { type: "object", properties: {} }, strict: false };

const flatCall = { id: "call_ns_1", name: "multi_agent_v1__close_agent", arguments: '{"id":"agent-7"}' };

/** The model calls the first function of the request whose name holds `close_agent`, else its first function. */
function namespacedName(body: Record<string, unknown>): string {
  const names = (body.tools as Array<{ function: { name: string } }>).map((t) => t.function.name);
  return names.find((name) => name.includes("close_agent")) ?? names[0] ?? flatCall.name;
}

const pricing = { prompt: "0.000002", completion: "0.000008" };
const model = (id: string, provider: string, upstream: string) => ({ id, name: id, context_length: 200000, endpoints: [{ provider, upstream_model: upstream, pricing, max_completion_tokens: 8192 }] });

beforeAll(async () => {
  chat = await startFakeChat((body) => (Array.isArray(body.messages) && body.messages.some((m: { role?: string }) => m.role === "tool") ? { content: "Closed." } : { calls: [{ ...flatCall, name: namespacedName(body) }] }));
  responses = await startFakeResponses();
  const catalog = {
    providers: [
      { slug: "agent", name: "Agent", adapter: "openai-compatible", base_url: chat.baseUrl, requires_api_key: false },
      { slug: "openai", name: "OpenAI", adapter: "openai", base_url: responses.baseUrl, requires_api_key: false },
    ],
    models: [model("agent/tools", "agent", "tools"), model("openai/gpt", "openai", "gpt")],
  };
  gw = await startTestGateway(await catalogEnv(catalog));
  const key = String((await gw.call("POST", "/keys", { body: { name: "namespace-tools" } })).body.key);
  openai = new OpenAI({ apiKey: key, baseURL: gw.apiUrl });
}, 60_000);
afterAll(async () => {
  await gw?.stop();
  await Promise.all([chat?.stop(), responses?.stop()]);
});

/** The answer of one request, buffered or streamed. */
async function ask(params: Omit<Parameters<OpenAI["responses"]["create"]>[0], "stream">, streamed: boolean): Promise<Response> {
  if (streamed) return completedOf(await collect(await openai.responses.create({ ...params, stream: true })));
  return openai.responses.create({ ...params, stream: false });
}

const functionCalls = (response: Response) => response.output.filter((item): item is ResponseFunctionToolCall => item.type === "function_call");

describe("namespace tools through an OpenAI-compatible endpoint", () => {
  for (const streamed of [false, true]) {
    it(`reach the model flattened, and its calls come back namespaced (${streamed ? "streamed" : "buffered"})`, async () => {
      const first = await ask({ model: "agent/tools", input: "Close agent 7", tools: [shell, agents] }, streamed);
      const sent = chat.requests.at(-1)!;
      expect(sent.tools).toEqual([
        { type: "function", function: { name: "shell", description: "Run a command", parameters: { type: "object", properties: {} }, strict: false } },
        { type: "function", function: { name: "multi_agent_v1__close_agent", description: "Close a sub-agent.", parameters: closeParams, strict: false } },
        { type: "function", function: { name: "multi_agent_v1__spawn_agent", description: "Start a sub-agent.", parameters: { type: "object", properties: {} }, strict: false } },
      ]);
      const calls = functionCalls(first);
      expect(calls).toHaveLength(1);
      expect(calls[0]).toMatchObject({ type: "function_call", call_id: "call_ns_1", name: "close_agent", namespace: "multi_agent_v1", arguments: '{"id":"agent-7"}' });

      const history: ResponseInputItem[] = [
        { type: "message", role: "user", content: "Close agent 7" },
        { type: "function_call", call_id: calls[0]!.call_id, name: calls[0]!.name, namespace: calls[0]!.namespace, arguments: calls[0]!.arguments } as ResponseInputItem,
        { type: "function_call_output", call_id: calls[0]!.call_id, output: "closed" },
      ];
      const second = await ask({ model: "agent/tools", input: history, tools: [shell, agents] }, streamed);
      expect(second.output_text).toBe("Closed.");
      const messages = chat.requests.at(-1)!.messages as Array<Record<string, unknown>>;
      expect(messages).toContainEqual(expect.objectContaining({ role: "assistant", tool_calls: [{ id: "call_ns_1", type: "function", function: { name: "multi_agent_v1__close_agent", arguments: '{"id":"agent-7"}' } }] }));
      expect(messages).toContainEqual(expect.objectContaining({ role: "tool", tool_call_id: "call_ns_1", content: "closed" }));
    });
  }

  it("streams the call's item under its own name with its namespace", async () => {
    const events = await collect(await openai.responses.create({ model: "agent/tools", input: "Close agent 7", tools: [agents], stream: true }));
    const added = events.flatMap((e) => (e.type === "response.output_item.added" && e.item.type === "function_call" ? [e.item] : []));
    expect(added).toEqual([expect.objectContaining({ name: "close_agent", namespace: "multi_agent_v1" })]);
    const done = events.flatMap((e) => (e.type === "response.function_call_arguments.done" ? [e] : []));
    expect(done).toEqual([expect.objectContaining({ name: "close_agent", arguments: '{"id":"agent-7"}' })]);
  });

  it("gives a long namespaced name a short unique one", async () => {
    const long = { ...agents, name: `n${"s".repeat(70)}` } as unknown as Tool;
    const answer = await ask({ model: "agent/tools", input: "Hi", tools: [long] }, false);
    const names = (chat.requests.at(-1)!.tools as Array<{ function: { name: string } }>).map((t) => t.function.name);
    expect(names).toHaveLength(2);
    for (const name of names) expect(name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
    expect(new Set(names).size).toBe(2);
    expect(functionCalls(answer)[0]).toMatchObject({ name: "close_agent", namespace: `n${"s".repeat(70)}` });
  });

  it("refuses a namespace holding a custom tool, naming the place", async () => {
    const custom = { ...agents, tools: [{ type: "custom", name: "apply_patch", description: "Patch files" }] } as unknown as Tool;
    const res = await gw.call("POST", "/responses", { key: openai.apiKey, body: { model: "agent/tools", input: "Hi", tools: [shell, custom] } });
    expect(res.status).toBe(400);
    expect(res.body.error?.message).toMatch(/tools\.1\.tools\.0/);
    expect(res.body.error?.message).toMatch(/custom/);
  });
});

describe("namespace tools through OpenAI's Responses endpoint", () => {
  it("are accepted and arrive flattened", async () => {
    const answer = await ask({ model: "openai/gpt", input: "Close agent 7", tools: [agents] }, false);
    const tools = responses.requests.at(-1)!.body.tools as Array<Record<string, unknown>>;
    expect(tools.map((t) => [t.type, t.name])).toEqual([
      ["function", "multi_agent_v1__close_agent"],
      ["function", "multi_agent_v1__spawn_agent"],
    ]);
    expect(tools[0]).toMatchObject({ description: "Close a sub-agent.", parameters: closeParams });
    expect(functionCalls(answer)[0]).toMatchObject({ name: "close_agent", namespace: "multi_agent_v1" });
  });
});
