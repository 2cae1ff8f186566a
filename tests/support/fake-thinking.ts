import { createServer, type ServerResponse } from "node:http";
import { listenLocal } from "./listen.js";

type Json = Record<string, unknown>;

export interface FakeThinking {
  baseUrl: string;
  /** Every request: its path and body. */
  requests: Array<{ path: string; body: Json }>;
  /** Why a request was refused, as the real provider would refuse it. */
  refusals: string[];
  stop(): Promise<void>;
}

/**
 * Thinking models in three wire formats on 127.0.0.1, each asking for the time once and then answering.
 * Like the real ones, they refuse a turn that sends back their tool call without the reasoning it came
 * with: Anthropic's signed thinking block (`/v1/messages`), Gemini's thought signature on the function
 * call (`/v1/models/<m>:generateContent`), and an OpenAI-compatible model's encrypted reasoning and signed
 * text (`/v1/chat/completions`, reasoning_details streamed in pieces).
 */
export async function startFakeThinking(): Promise<FakeThinking> {
  const fake: FakeThinking = { baseUrl: "", requests: [], refusals: [], stop: async () => {} };
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Json;
    const path = req.url ?? "/";
    fake.requests.push({ path, body });
    const refuse = (status: number, message: string, error: Json) => {
      fake.refusals.push(message);
      res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(error));
    };
    if (path === "/v1/messages") return anthropic(body, res, (m) => refuse(400, m, { type: "error", error: { type: "invalid_request_error", message: m } }));
    const gemini = /^\/v1\/models\/([^:]+):(generateContent|streamGenerateContent)/.exec(path);
    if (gemini) return google(body, gemini[2] === "streamGenerateContent", res, (m) => refuse(400, m, { error: { code: 400, message: m, status: "INVALID_ARGUMENT" } }));
    if (path === "/v1/chat/completions") return openAi(body, res, (m) => refuse(400, m, { error: { message: m } }));
    res.writeHead(404).end();
  });
  Object.assign(fake, await listenLocal(server));
  return fake;
}

const sse = (res: ServerResponse, events: unknown[], named = false) => {
  res.writeHead(200, { "content-type": "text/event-stream" });
  for (const e of events) res.write(`${named ? `event: ${(e as { type: string }).type}\n` : ""}data: ${JSON.stringify(e)}\n\n`);
  res.end(named ? "" : "data: [DONE]\n\n");
};

const answered = (messages: Json[], role: string, has: (m: Json) => boolean) => messages.some((m) => m.role === role && has(m));

const anthropicThinking = "The user wants the time. I should ask the clock.";
const anthropicSignature = "EqQBCkYIBxgCKkBsig-anthropic-1";

function anthropic(body: Json, res: ServerResponse, refuse: (message: string) => void) {
  const messages = body.messages as Json[];
  const blocks = (m: Json) => (Array.isArray(m.content) ? (m.content as Json[]) : []);
  const afterTool = answered(messages, "user", (m) => blocks(m).some((b) => b.type === "tool_result"));
  if (afterTool) {
    const turn = messages.find((m) => m.role === "assistant" && blocks(m).some((b) => b.type === "tool_use"))!;
    const [first] = blocks(turn);
    if (first?.type !== "thinking" || first.signature !== anthropicSignature || first.thinking !== anthropicThinking) {
      return refuse("messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`. When `thinking` is enabled, a final `assistant` message must start with a thinking block");
    }
  }
  const usage = { input_tokens: 10, output_tokens: 5 };
  const content: Json[] = afterTool
    ? [{ type: "thinking", thinking: "The clock answered.", signature: "EqQBsig-anthropic-2" }, { type: "text", text: "It is noon." }]
    : [{ type: "thinking", thinking: anthropicThinking, signature: anthropicSignature }, { type: "tool_use", id: "toolu_01", name: "datetime", input: {} }];
  const stop = afterTool ? "end_turn" : "tool_use";
  if (!body.stream) return void res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ id: "msg_1", type: "message", role: "assistant", content, stop_reason: stop, usage }));
  const events: unknown[] = [{ type: "message_start", message: { id: "msg_1", usage: { input_tokens: 10, output_tokens: 1 } } }];
  content.forEach((block, index) => {
    if (block.type === "thinking") {
      const text = String(block.thinking);
      events.push({ type: "content_block_start", index, content_block: { type: "thinking", thinking: "" } });
      events.push({ type: "content_block_delta", index, delta: { type: "thinking_delta", thinking: text.slice(0, 10) } });
      events.push({ type: "content_block_delta", index, delta: { type: "thinking_delta", thinking: text.slice(10) } });
      events.push({ type: "content_block_delta", index, delta: { type: "signature_delta", signature: block.signature } });
    } else if (block.type === "tool_use") {
      events.push({ type: "content_block_start", index, content_block: { type: "tool_use", id: block.id, name: block.name, input: {} } });
      events.push({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: "{}" } });
    } else {
      events.push({ type: "content_block_start", index, content_block: { type: "text", text: "" } });
      events.push({ type: "content_block_delta", index, delta: { type: "text_delta", text: block.text } });
    }
    events.push({ type: "content_block_stop", index });
  });
  events.push({ type: "message_delta", delta: { stop_reason: stop }, usage: { output_tokens: 5 } }, { type: "message_stop" });
  sse(res, events, true);
}

const geminiSignature = "CiQB0e2Kb-gemini-signature";

function google(body: Json, stream: boolean, res: ServerResponse, refuse: (message: string) => void) {
  const contents = body.contents as Array<{ role: string; parts: Json[] }>;
  const afterTool = contents.some((c) => c.parts.some((p) => p.functionResponse));
  if (afterTool) {
    const call = contents.flatMap((c) => c.parts).find((p) => p.functionCall);
    if (call?.thoughtSignature !== geminiSignature) return refuse("Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly");
  }
  const usageMetadata = { promptTokenCount: 10, candidatesTokenCount: 4, thoughtsTokenCount: 1, totalTokenCount: 15 };
  const parts = afterTool
    ? [{ text: "The clock answered.", thought: true }, { text: "It is noon." }]
    : [{ text: "I should ask the clock.", thought: true }, { functionCall: { name: "datetime", args: {} }, thoughtSignature: geminiSignature }];
  const candidate = (p: Json[], finish?: string) => ({ candidates: [{ index: 0, content: { role: "model", parts: p }, ...(finish ? { finishReason: finish } : {}) }] });
  if (!stream) return void res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ ...candidate(parts, "STOP"), usageMetadata, responseId: "r1" }));
  sse(res, [candidate([parts[0]!]), { ...candidate([parts[1]!], "STOP"), usageMetadata }]);
}

const openAiText = "Time matters here; ask the clock.";
const openAiSignature = "sig-openai-compatible-1";
const openAiEncrypted = "gAAAAB-encrypted-reasoning-1";

function openAi(body: Json, res: ServerResponse, refuse: (message: string) => void) {
  const messages = body.messages as Json[];
  const afterTool = messages.some((m) => m.role === "tool");
  if (afterTool) {
    const turn = messages.find((m) => m.role === "assistant" && Array.isArray(m.tool_calls))!;
    const details = (turn.reasoning_details ?? []) as Json[];
    const text = details.find((d) => d.type === "reasoning.text");
    const encrypted = details.find((d) => d.type === "reasoning.encrypted");
    if (text?.text !== openAiText || text.signature !== openAiSignature || encrypted?.data !== openAiEncrypted) {
      return refuse(`reasoning_details of the assistant turn with tool calls must be sent back unchanged; got ${JSON.stringify(details)}`);
    }
  }
  const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15, completion_tokens_details: { reasoning_tokens: 2 } };
  const call = { id: "call_oa_1", type: "function", function: { name: "datetime", arguments: "{}" } };
  const details = [
    { type: "reasoning.text", text: afterTool ? "Now answer." : openAiText, signature: afterTool ? "sig-openai-compatible-2" : openAiSignature, format: "anthropic-claude-v1", index: 0 },
    ...(afterTool ? [] : [{ type: "reasoning.encrypted", data: openAiEncrypted, format: "openai-responses-v1", index: 1 }]),
  ];
  const message = afterTool
    ? { role: "assistant", content: "It is noon.", reasoning: "Now answer.", reasoning_details: details }
    : { role: "assistant", content: null, reasoning: openAiText, reasoning_details: details, tool_calls: [call] };
  const finish = afterTool ? "stop" : "tool_calls";
  if (!body.stream) return void res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ id: "up-1", object: "chat.completion", created: 1, model: body.model, choices: [{ index: 0, message, finish_reason: finish }], usage }));
  const chunk = (delta: Json, finishReason: string | null = null, extra: Json = {}) => ({ id: "up-1", object: "chat.completion.chunk", created: 1, model: body.model, choices: [{ index: 0, delta, finish_reason: finishReason }], ...extra });
  const [text, ...rest] = details;
  const words = String(text!.text);
  // The signed text in three pieces of one index, as reasoning streams: two of text, then the signature.
  const events: unknown[] = [
    chunk({ role: "assistant", reasoning: words.slice(0, 8), reasoning_details: [{ type: "reasoning.text", text: words.slice(0, 8), format: text!.format, index: 0 }] }),
    chunk({ reasoning: words.slice(8), reasoning_details: [{ type: "reasoning.text", text: words.slice(8), index: 0 }] }),
    chunk({ reasoning_details: [{ type: "reasoning.text", signature: text!.signature, index: 0 }] }),
    ...rest.map((d) => chunk({ reasoning_details: [d] })),
    afterTool ? chunk({ content: "It is noon." }) : chunk({ tool_calls: [{ index: 0, ...call }] }),
    chunk({}, finish),
    { ...chunk({}), choices: [], usage },
  ];
  sse(res, events);
}
