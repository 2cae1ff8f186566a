import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import { listenLocal } from "./listen.js";

type Json = Record<string, unknown>;

/** One request the fake received: the bytes as they came, parsed, and the headers that matter. */
export interface ReceivedRequest {
  path: string;
  raw: string;
  body: Json;
  headers: { apiKey?: string; version?: string; beta?: string; authorization?: string };
  /** Every header as it came. */
  allHeaders: IncomingHttpHeaders;
  /** The gateway went away before the answer ended (a client abort reached upstream). */
  aborted: boolean;
}

export interface FakeAnthropic {
  /** Ends with `/v1`; the fake answers `POST /v1/messages` and `POST /v1/messages/count_tokens`. */
  baseUrl: string;
  requests: ReceivedRequest[];
  /** What `count_tokens` answers. */
  readonly countedTokens: number;
  stop(): Promise<void>;
}

/** The usage the fake reports besides the cache: 12 uncached input tokens, 9 output tokens. */
export const fakeUsage = { input: 12, output: 9 };
/**
 * Tokens of a cached prefix, written the first time a prefix is seen and read every time after, whatever its
 * length: a test pricing them marks a prefix at least this long (Anthropic caches nothing shorter than 1024
 * tokens), or the gateway's hold, sized by the prompt, caps the charge below them.
 */
export const cachedPrefixTokens = 2048;
export const greeting = "Hello from the fake Anthropic server.";
export const thinkingPieces = ["Let me think", " about this."];
export const signature = "sig-fake-0123456789";
export const toolInput = { city: "Paris" };
const countedTokens = 321;

const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value);
const blocksOf = (content: unknown): Json[] => (typeof content === "string" ? [{ type: "text", text: content }] : Array.isArray(content) ? content.filter(isObject) : []);

/**
 * The prefixes a prompt cache would key on, one per breakpoint: the model, tools, system and messages up to
 * each place carrying `cache_control` (the tools, the system prompt, each marked message), as the JSON the fake
 * received, markers and all. Empty when nothing is marked.
 */
function cachedPrefixes(body: Json): string[] {
  const parts: unknown[] = [body.model, body.tools ?? null];
  const marks: number[] = [];
  if (JSON.stringify(body.tools ?? "").includes("cache_control")) marks.push(parts.length);
  parts.push(body.system ?? null);
  if (JSON.stringify(body.system ?? "").includes("cache_control")) marks.push(parts.length);
  const messages = Array.isArray(body.messages) ? body.messages.filter(isObject) : [];
  messages.forEach((m) => {
    parts.push(m);
    if (blocksOf(m.content).some((b) => isObject(b.cache_control))) marks.push(parts.length);
  });
  return marks.map((n) => JSON.stringify(parts.slice(0, n)));
}

/**
 * What the cache did for a request: a prefix seen before (at one of its breakpoints) is read, and the prefix up to the
 * last breakpoint, when new, is written; `cachedPrefixTokens` each. Writes are told apart by how long they are
 * kept, as Anthropic does: an hour when a marker asks for `ttl: "1h"`, else five minutes.
 */
function cacheUsage(cache: Set<string>, body: Json): Json {
  const prefixes = cachedPrefixes(body);
  if (prefixes.length === 0) return {};
  const read = prefixes.some((p) => cache.has(p));
  const written = cache.has(prefixes.at(-1)!) ? 0 : cachedPrefixTokens;
  for (const p of prefixes) cache.add(p);
  const hour = JSON.stringify(body).includes('"ttl":"1h"');
  return {
    cache_creation_input_tokens: written,
    cache_read_input_tokens: read ? cachedPrefixTokens : 0,
    cache_creation: { ephemeral_5m_input_tokens: hour ? 0 : written, ephemeral_1h_input_tokens: hour ? written : 0 },
  };
}

/** What the fake answers a prompt too long for its context, word for word as Anthropic's API says it. */
export const tooLongMessage = "prompt is too long: 210000 tokens > 200000 maximum";
/** The citation of the `cited` model's second text block: the first sentence of the first document. */
export const citation = { type: "char_location", cited_text: "The grass is green.", document_index: 0, document_title: "Colours", start_char_index: 0, end_char_index: 19, file_id: null };
/** The `cited` model's answer: a plain text block, then one citing the document. */
export const citedBlocks: Json[] = [
  { type: "text", text: "According to the document, " },
  { type: "text", text: "the grass is green.", citations: [citation] },
];
/** The `interleaved` model's answer (interleaved thinking): thinking, words, a call, more thinking, another call. */
export const interleavedBlocks = (tool: string): Json[] => [
  { type: "thinking", thinking: "First I look up Paris.", signature: "sig-first" },
  { type: "text", text: "Let me check both cities." },
  { type: "tool_use", id: "toolu_first", name: tool, input: { city: "Paris" } },
  { type: "thinking", thinking: "Now Lyon as well.", signature: "sig-second" },
  { type: "tool_use", id: "toolu_second", name: tool, input: { city: "Lyon" } },
];

/** A call the last user turn asks for in words: `call tool <name> with <JSON input>`. */
const toolRequest = /call tool (\S+) with (\{.*\})/s;

/**
 * The content blocks of the answer, by the words in the model name and what the request carries: signed thinking
 * first when asked for (or the model is a thinking one), then a tool result quoted back, a tool call asked for in
 * the last user turn's words, a call of the first tool (a `tools` model), a count of images, or a greeting.
 */
function answerBlocks(body: Json, model: string): Json[] {
  const messages = Array.isArray(body.messages) ? body.messages.filter(isObject) : [];
  const last = blocksOf(messages.at(-1)?.content);
  const tools = Array.isArray(body.tools) ? body.tools.filter(isObject) : [];
  if (model.includes("cited")) return citedBlocks;
  if (model.includes("interleaved")) return interleavedBlocks(String(tools[0]?.name ?? "get_weather"));
  const blocks: Json[] = [];
  const thinks = model.includes("thinking") || (isObject(body.thinking) && body.thinking.type === "enabled");
  if (thinks) blocks.push({ type: "thinking", thinking: thinkingPieces.join(""), signature });
  const result = last.find((b) => b.type === "tool_result");
  const asked = messages.at(-1)?.role === "user" ? toolRequest.exec(last.map((b) => (b.type === "text" ? String(b.text) : "")).join("\n")) : null;
  const askedTool = asked && tools.find((t) => t.name === asked[1]);
  if (result) blocks.push({ type: "text", text: `The tool said: ${typeof result.content === "string" ? result.content : JSON.stringify(result.content)}` });
  else if (asked && askedTool) blocks.push({ type: "text", text: `I'll call ${asked[1]}.` }, { type: "tool_use", id: "toolu_fake_1", name: asked[1], input: JSON.parse(asked[2]!) as Json });
  else if (tools.length && model.includes("tools")) blocks.push({ type: "tool_use", id: "toolu_fake_1", name: String(tools[0]!.name), input: toolInput });
  else if (model.includes("image")) blocks.push({ type: "text", text: `I see ${messages.flatMap((m) => blocksOf(m.content)).filter((b) => b.type === "image").length} images.` });
  else blocks.push({ type: "text", text: greeting });
  return blocks;
}

/** Anthropic refuses a tool-use turn sent back without the thinking block (and signature) that preceded it. */
function missingThinking(body: Json): boolean {
  if (!isObject(body.thinking) || body.thinking.type !== "enabled") return false;
  const messages = Array.isArray(body.messages) ? body.messages.filter(isObject) : [];
  return messages.some((m) => {
    const blocks = blocksOf(m.content);
    return m.role === "assistant" && blocks.some((b) => b.type === "tool_use") && !blocks.some((b) => b.type === "thinking" && b.signature === signature);
  });
}

function sendError(res: ServerResponse, status: number, type: string, message: string) {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify({ type: "error", error: { type, message } }));
}

/** A text in two pieces, the first the longer; an empty piece is left out. */
const halves = (text: string): string[] => [text.slice(0, Math.ceil(text.length / 2)), text.slice(Math.ceil(text.length / 2))].filter(Boolean);

/** The events of one block, as Anthropic streams it: start (citations first, when it cites), deltas in pieces, stop. */
function blockEvents(block: Json, index: number): Json[] {
  const events: Json[] = [];
  const delta = (d: Json) => events.push({ type: "content_block_delta", index, delta: d });
  if (block.type === "text") {
    const cited = Array.isArray(block.citations);
    events.push({ type: "content_block_start", index, content_block: { type: "text", text: "", ...(cited ? { citations: [] } : {}) } });
    if (cited) for (const c of block.citations as Json[]) delta({ type: "citations_delta", citation: c });
    for (const piece of halves(String(block.text))) delta({ type: "text_delta", text: piece });
  } else if (block.type === "thinking") {
    events.push({ type: "content_block_start", index, content_block: { type: "thinking", thinking: "", signature: "" } });
    const thinking = String(block.thinking);
    for (const piece of thinking === thinkingPieces.join("") ? thinkingPieces : halves(thinking)) delta({ type: "thinking_delta", thinking: piece });
    delta({ type: "signature_delta", signature: String(block.signature) });
  } else if (block.type === "tool_use") {
    events.push({ type: "content_block_start", index, content_block: { ...block, input: {} } });
    const json = JSON.stringify(block.input);
    for (const piece of [json.slice(0, 5), json.slice(5)]) delta({ type: "input_json_delta", partial_json: piece });
  }
  events.push({ type: "content_block_stop", index });
  return events;
}

/**
 * A fake Anthropic Messages API on 127.0.0.1 that records the bytes it receives. The model name picks the
 * answer: `thinking` (a signed thinking block first, and a 400 when a tool turn comes back without it),
 * `tools` (a call of the first tool; a tool result is quoted back), `image` (counts the images), `cited`
 * (`citedBlocks`), `interleaved` (`interleavedBlocks` with the first tool's name), `too-long` (400
 * `tooLongMessage`; `late-too-long` after 2.5 s, once keep-alive comments began the stream), `overloaded` (529), `mid-error` (an error event after the first words), `slow` (the first words, then
 * nothing for ten seconds), `stop` (ends on the stop sequence `STOP`); anything else greets. Whatever the model,
 * `thinking: {type: "enabled"}` gets a signed thinking block first, a last user turn saying `call tool <name>
 * with <JSON>` gets a sentence and that call (when the tool is declared), and `max_tokens: 1` gets one word
 * (`max_tokens`, as Claude Code's quota check does). Prompts with cache markers report the prefix up to their
 * last marker as written to the cache the first time, and each marked prefix seen before as read.
 */
export async function startFakeAnthropic(): Promise<FakeAnthropic> {
  const requests: ReceivedRequest[] = [];
  const cache = new Set<string>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8");
      const body = JSON.parse(raw) as Json;
      const header = (name: string) => (typeof req.headers[name] === "string" ? (req.headers[name] as string) : undefined);
      const received: ReceivedRequest = {
        path: req.url ?? "",
        raw,
        body,
        headers: { apiKey: header("x-api-key"), version: header("anthropic-version"), beta: header("anthropic-beta"), authorization: header("authorization") },
        allHeaders: req.headers,
        aborted: false,
      };
      requests.push(received);
      res.on("close", () => {
        if (!res.writableFinished) received.aborted = true;
      });
      if (req.url === "/v1/messages/count_tokens") return void res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ input_tokens: countedTokens }));
      const model = String(body.model);
      if (model.includes("overloaded")) return sendError(res, 529, "overloaded_error", "Overloaded");
      if (model.includes("late-too-long")) return void setTimeout(() => sendError(res, 400, "invalid_request_error", tooLongMessage), 2500);
      if (model.includes("too-long")) return sendError(res, 400, "invalid_request_error", tooLongMessage);
      if (missingThinking(body)) return sendError(res, 400, "invalid_request_error", "Expected `thinking` or `redacted_thinking`, but found `tool_use`");
      const cached = cacheUsage(cache, body);
      const cut = body.max_tokens === 1;
      const blocks = cut ? [{ type: "text", text: greeting.split(" ")[0] }] : answerBlocks(body, model);
      const stopped = model.includes("stop") && Array.isArray(body.stop_sequences) && body.stop_sequences.includes("STOP");
      const full = model.includes("window-full");
      const reason = cut ? "max_tokens" : full ? "model_context_window_exceeded" : stopped ? "stop_sequence" : blocks.some((b) => b.type === "tool_use") ? "tool_use" : "end_turn";
      const stop = { stop_reason: reason, stop_sequence: stopped ? "STOP" : null };
      const usage = { input_tokens: fakeUsage.input, output_tokens: cut ? 1 : fakeUsage.output, ...cached };
      const message = { id: "msg_fake_1", type: "message", role: "assistant", model, content: blocks, ...stop, usage };
      if (!body.stream) return void res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(message));
      res.writeHead(200, { "content-type": "text/event-stream" });
      const send = (event: Json) => res.write(`event: ${String(event.type)}\ndata: ${JSON.stringify(event)}\n\n`);
      send({ type: "message_start", message: { ...message, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } } });
      send({ type: "ping" });
      const events = blocks.flatMap((block, i) => blockEvents(block, i));
      if (model.includes("mid-error") || model.includes("slow")) {
        for (const event of events.slice(0, 2)) send(event);
        if (model.includes("mid-error")) return void res.end(`event: error\ndata: ${JSON.stringify({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } })}\n\n`);
        const timer = setTimeout(() => res.end(), 10_000);
        return void res.on("close", () => clearTimeout(timer));
      }
      for (const event of events) send(event);
      send({ type: "message_delta", delta: stop, usage });
      if (!model.includes("delta-then-cut")) send({ type: "message_stop" });
      res.end();
    });
  });
  const { baseUrl, stop } = await listenLocal(server);
  return { baseUrl, requests, countedTokens, stop };
}
