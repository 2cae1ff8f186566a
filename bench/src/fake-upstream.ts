import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { embeddingsAnswer } from "./fake-embeddings.js";

/**
 * The answers of the fake upstream, the same in both wire formats: the text "Hello! How can I help you today?",
 * streamed as the same 9 words, 12 prompt and 9 completion tokens.
 */
const text = "Hello! How can I help you today?";
const words = "Hello ! How can I help you today ?".split(" ");
const usage = { prompt_tokens: 12, completion_tokens: 9, total_tokens: 21 };

const completion = JSON.stringify({
  id: "bench",
  object: "chat.completion",
  created: 1,
  model: "bench",
  choices: [{ index: 0, finish_reason: "stop", message: { role: "assistant", content: text } }],
  usage,
});
const frame = (o: object) => `data: ${JSON.stringify({ id: "bench", object: "chat.completion.chunk", created: 1, model: "bench", ...o })}\n\n`;

/** Chat completions: the completion, or 11 `data:` frames (9 words, the finish, the usage) and `data: [DONE]`. */
function answerChat(res: ServerResponse, stream: boolean) {
  if (!stream) {
    res.writeHead(200, { "content-type": "application/json" }).end(completion);
    return;
  }
  res.writeHead(200, { "content-type": "text/event-stream" });
  for (const word of words) res.write(frame({ choices: [{ index: 0, delta: { content: `${word} ` } }] }));
  res.write(frame({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }));
  res.write(frame({ choices: [], usage }));
  res.end("data: [DONE]\n\n");
}

const message = JSON.stringify({
  id: "msg_bench",
  type: "message",
  role: "assistant",
  model: "bench",
  content: [{ type: "text", text }],
  stop_reason: "end_turn",
  stop_sequence: null,
  usage: { input_tokens: usage.prompt_tokens, output_tokens: usage.completion_tokens },
});
const event = <T extends { type: string }>(o: T) => `event: ${o.type}\ndata: ${JSON.stringify(o)}\n\n`;
const messageStart = {
  type: "message_start",
  message: {
    id: "msg_bench",
    type: "message",
    role: "assistant",
    model: "bench",
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage: { input_tokens: usage.prompt_tokens, output_tokens: 1 },
  },
};

/**
 * Anthropic's Messages: the message, or its events as Anthropic sends them: `message_start`, one text block
 * (`content_block_start`, 9 `content_block_delta` of the same words as chat's stream, `content_block_stop`),
 * `message_delta` with the stop reason and the output tokens, `message_stop`.
 */
function answerMessages(res: ServerResponse, stream: boolean) {
  if (!stream) {
    res.writeHead(200, { "content-type": "application/json" }).end(message);
    return;
  }
  res.writeHead(200, { "content-type": "text/event-stream" });
  res.write(event(messageStart));
  res.write(event({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }));
  for (const word of words) res.write(event({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: `${word} ` } }));
  res.write(event({ type: "content_block_stop", index: 0 }));
  res.write(event({ type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: usage.completion_tokens } }));
  res.end(event({ type: "message_stop" }));
}

/** OpenAI's embeddings: one vector of 1536 values per input (see fake-embeddings.ts), with its length set. */
function answerEmbeddings(res: ServerResponse, body: { input?: unknown; encoding_format?: unknown }) {
  const answer = embeddingsAnswer(body);
  res.writeHead(200, { "content-type": "application/json", "content-length": answer.length }).end(answer);
}

/**
 * The upstream every target of a benchmark calls, answering at once: OpenAI-compatible chat completions,
 * Anthropic's Messages at `/v1/messages` (what an endpoint of an `anthropic` provider calls), and OpenAI's
 * embeddings at `/v1/embeddings` (what an `openai-compatible` endpoint of an embedding model calls).
 */
export async function startFakeUpstream(): Promise<{ url: string; close(): void }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { stream?: boolean; input?: unknown; encoding_format?: unknown };
      const stream = body.stream === true;
      if (req.url === "/v1/embeddings") answerEmbeddings(res, body);
      else if (req.url === "/v1/messages") answerMessages(res, stream);
      else answerChat(res, stream);
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, close: () => server.close() };
}
