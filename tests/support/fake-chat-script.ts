import { createServer } from "node:http";
import { listenLocal } from "./listen.js";

type Json = Record<string, unknown>;

/** A call the fake model makes: its id, the function's name and its arguments as the JSON text sent. */
export interface ScriptedToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** What the fake model answers to one request. */
export interface ChatReply {
  content?: string;
  /** Reasoning text, sent as `reasoning` and as a `reasoning.text` entry of `reasoning_details`. */
  reasoning?: string;
  /** The signature of that entry. */
  signature?: string;
  calls?: ScriptedToolCall[];
  /** Usage in OpenAI's shape; 12 prompt and 5 completion tokens when not given. */
  usage?: Json;
  finish?: string;
  /** Streamed: the first half of the content, then an error chunk (OpenRouter's in-band error), then the end of the stream. */
  errorChunk?: boolean;
  /** Streamed: the first half of the content, then the connection drops. */
  cut?: boolean;
}

export interface FakeChat {
  baseUrl: string;
  /** Every request body, in order. */
  requests: Json[];
  stop(): Promise<void>;
}

export const reasoningFormat = "anthropic-claude-v1";

/**
 * An OpenAI-compatible Chat Completions server on 127.0.0.1 whose answer to each request is scripted by
 * `reply` (which reads the request): words, signed reasoning and tool calls, buffered or streamed as
 * OpenRouter streams them. Streamed, every text is cut in two pieces, reasoning comes first (its text, then
 * its signature), and each tool call opens with its id and name and sends its arguments in two pieces.
 */
export async function startFakeChat(reply: (body: Json) => ChatReply): Promise<FakeChat> {
  const fake: FakeChat = { baseUrl: "", requests: [], stop: async () => {} };
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Json;
    fake.requests.push(body);
    const r = reply(body);
    const usage = r.usage ?? { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 };
    const calls = (r.calls ?? []).map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: c.arguments } }));
    const finish = r.finish ?? (calls.length ? "tool_calls" : "stop");
    const detail = r.reasoning === undefined ? undefined : { type: "reasoning.text", text: r.reasoning, signature: r.signature ?? null, format: reasoningFormat, index: 0 };
    if (!body.stream) {
      const message = { role: "assistant", content: r.content ?? null, ...(detail ? { reasoning: r.reasoning, reasoning_details: [detail] } : {}), ...(calls.length ? { tool_calls: calls } : {}) };
      const answer = { id: "up-1", object: "chat.completion", created: 1, model: body.model, choices: [{ index: 0, message, finish_reason: finish }], usage };
      return void res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answer));
    }
    res.writeHead(200, { "content-type": "text/event-stream" });
    const chunk = (delta: Json, finishReason: string | null = null, extra: Json = {}) =>
      res.write(`data: ${JSON.stringify({ id: "up-1", object: "chat.completion.chunk", created: 1, model: body.model, choices: [{ index: 0, delta, finish_reason: finishReason }], ...extra })}\n\n`);
    const halves = (text: string) => [text.slice(0, Math.ceil(text.length / 2)), text.slice(Math.ceil(text.length / 2))];
    if (r.reasoning !== undefined) {
      for (const piece of halves(r.reasoning)) chunk({ reasoning: piece, reasoning_details: [{ type: "reasoning.text", text: piece, format: reasoningFormat, index: 0 }] });
      if (r.signature) chunk({ reasoning_details: [{ type: "reasoning.text", signature: r.signature, format: reasoningFormat, index: 0 }] });
    }
    const [first, second] = halves(r.content ?? "");
    if (first) chunk({ role: "assistant", content: first });
    if (r.cut) return void setTimeout(() => res.socket?.destroy(), 20);
    if (r.errorChunk) {
      chunk({ content: "" }, "error", { error: { code: 502, message: "Upstream model crashed" } });
      return void res.end("data: [DONE]\n\n");
    }
    if (second) chunk({ content: second });
    calls.forEach((call, index) => {
      chunk({ tool_calls: [{ index, id: call.id, type: "function", function: { name: call.function.name, arguments: "" } }] });
      for (const piece of halves(call.function.arguments)) chunk({ tool_calls: [{ index, function: { arguments: piece } }] });
    });
    chunk({}, finish);
    res.write(`data: ${JSON.stringify({ id: "up-1", object: "chat.completion.chunk", created: 1, model: body.model, choices: [], usage })}\n\n`);
    res.end("data: [DONE]\n\n");
  });
  Object.assign(fake, await listenLocal(server));
  return fake;
}
