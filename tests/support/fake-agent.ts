import { createServer } from "node:http";
import { listenLocal } from "./listen.js";

export interface ScriptedCall {
  name: string;
  arguments: unknown;
}

/** What the fake model says in one turn: words, calls, or both. */
export interface Reply {
  content?: string;
  calls?: ScriptedCall[];
  usage?: { prompt_tokens: number; completion_tokens: number };
  finish?: string;
}

export type Message = { role: string; content?: unknown; tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>; tool_call_id?: string };
export type Script = (body: { messages: Message[]; tools?: unknown[]; tool_choice?: unknown }) => Reply;

export interface FakeAgent {
  baseUrl: string;
  /** Every request body, in order. */
  requests: Array<Record<string, unknown>>;
  stop(): Promise<void>;
}

/**
 * An OpenAI-compatible model on 127.0.0.1 whose turns are scripted per upstream model name: each turn reads
 * the conversation so far (tool results included) and answers with text or tool calls, buffered or
 * streamed (tool calls in deltas: id and name first, arguments in two pieces).
 */
export async function startFakeAgent(scripts: Record<string, Script>): Promise<FakeAgent> {
  const fake: FakeAgent = { baseUrl: "", requests: [], stop: async () => {} };
  let calls = 0;
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown> & { messages: Message[] };
    fake.requests.push(body);
    const script = scripts[String(body.model)];
    if (!script) return void res.writeHead(404).end(JSON.stringify({ error: { message: `no script for ${String(body.model)}` } }));
    const reply = script(body);
    const usage = { ...(reply.usage ?? { prompt_tokens: 10, completion_tokens: 5 }) };
    const toolCalls = (reply.calls ?? []).map((c) => ({ id: `call_${++calls}`, type: "function", function: { name: c.name, arguments: JSON.stringify(c.arguments) } }));
    const finish = reply.finish ?? (toolCalls.length ? "tool_calls" : "stop");
    const total = { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens };
    if (!body.stream) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          id: `up-${fake.requests.length}`,
          object: "chat.completion",
          created: 1,
          model: body.model,
          choices: [{ index: 0, finish_reason: finish, message: { role: "assistant", content: reply.content ?? null, ...(toolCalls.length ? { tool_calls: toolCalls } : {}) } }],
          usage: total,
        }),
      );
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream" });
    const frame = (choices: unknown[], extra: object = {}) => res.write(`data: ${JSON.stringify({ id: "up", object: "chat.completion.chunk", created: 1, model: body.model, choices, ...extra })}\n\n`);
    if (reply.content) {
      const half = Math.ceil(reply.content.length / 2);
      frame([{ index: 0, delta: { role: "assistant", content: reply.content.slice(0, half) } }]);
      frame([{ index: 0, delta: { content: reply.content.slice(half) } }]);
    }
    toolCalls.forEach((call, index) => {
      frame([{ index: 0, delta: { tool_calls: [{ index, id: call.id, type: "function", function: { name: call.function.name, arguments: "" } }] } }]);
      const half = Math.ceil(call.function.arguments.length / 2);
      frame([{ index: 0, delta: { tool_calls: [{ index, function: { arguments: call.function.arguments.slice(0, half) } }] } }]);
      frame([{ index: 0, delta: { tool_calls: [{ index, function: { arguments: call.function.arguments.slice(half) } }] } }]);
    });
    frame([{ index: 0, delta: {}, finish_reason: finish }]);
    frame([], { usage: total });
    res.end("data: [DONE]\n\n");
  });
  Object.assign(fake, await listenLocal(server));
  return fake;
}

/** The tool results the conversation holds so far, parsed. */
export const toolResults = (messages: Message[]): Array<Record<string, unknown>> =>
  messages.filter((m) => m.role === "tool").map((m) => JSON.parse(String(m.content)) as Record<string, unknown>);

/** A model `agent/<name>` for each script, served by the fake agent (its key in `FAKE_AGENT_KEY`), 100 output tokens at most. */
export function agentCatalog(
  agent: Pick<FakeAgent, "baseUrl">,
  names: readonly string[],
  options: { pricing?: Record<string, string>; supportedParameters?: string[] } = {},
) {
  const pricing = options.pricing ?? { prompt: "0.000001", completion: "0.000002" };
  const supported_parameters = options.supportedParameters ?? ["tools", "tool_choice"];
  return {
    providers: [{ slug: "fake", name: "Fake", adapter: "openai-compatible", base_url: agent.baseUrl, api_key_env: "FAKE_AGENT_KEY" }],
    models: names.map((id) => ({
      id: `agent/${id}`,
      name: id,
      context_length: 8000,
      endpoints: [{ provider: "fake", upstream_model: id, pricing, max_completion_tokens: 100, supported_parameters }],
    })),
  };
}
