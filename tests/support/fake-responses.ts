import { createServer, type ServerResponse } from "node:http";
import type {
  Response,
  ResponseFunctionToolCall,
  ResponseOutputItem,
  ResponseOutputMessage,
  ResponseReasoningItem,
  ResponseStreamEvent,
  ResponseUsage,
} from "openai/resources/responses/responses";
import { listenLocal } from "./listen.js";

type Json = Record<string, unknown>;

export interface FakeResponses {
  /** Ends with `/v1`; the fake answers `POST /v1/responses`. */
  baseUrl: string;
  /** Bodies and authorization headers of every request received, in order. */
  requests: Array<{ body: Record<string, unknown>; authorization?: string }>;
  stop(): Promise<void>;
}

/** A stream event before the fake numbers it. */
type Unnumbered = ResponseStreamEvent extends infer E ? (E extends unknown ? Omit<E, "sequence_number"> : never) : never;

/** A response as the wire carries it: the SDK's `output_text` is the SDK's own addition. */
type WireResponse = Omit<Response, "output_text">;

/**
 * How a request ends, chosen by words in its model name: `incomplete` (output limit), `fail`
 * (`response.failed` mid-stream, a 500 when buffered), `overloaded` (failed as overloaded, buffered too),
 * `error-event` (an `error` event mid-stream), `cut` (a stream that stops without a terminal event), else
 * completed. What it says: a reasoning item first (two summary parts, encrypted content) when the name holds
 * `reasoning`; then a refusal for `refusal`, the tool result quoted once the request has one, a call of the
 * first tool when the request has tools, else a greeting. A name holding `unsaid` stops after the reasoning
 * item, which is then `incomplete`, as when the output limit is reached before the model says a word.
 */
type Ending = "completed" | "incomplete" | "failed" | "overloaded" | "error-event" | "cut";

const greeting = "Hello from the fake Responses server.";
const summaries = ["The caller wants a greeting.", "A short answer will do."];
const refusalText = "I can't help with that.";

/** How a model name asks the fake to end its answer. */
function endingOf(model: string): Ending {
  for (const ending of ["overloaded", "error-event", "incomplete", "cut"] as const) if (model.includes(ending)) return ending;
  return model.includes("fail") ? "failed" : "completed";
}

/** Whether a value is a JSON object. */
const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value);
/** The input items of a request. */
const inputOf = (body: Json): Json[] => (Array.isArray(body.input) ? body.input.filter(isObject) : []);

/** The usage the fake reports: 20 input tokens (4 cached), 9 output tokens (3 of them reasoning when it reasons). */
const usageOf = (reasoned: boolean): ResponseUsage => ({
  input_tokens: 20,
  input_tokens_details: { cached_tokens: 4, cache_write_tokens: 0 },
  output_tokens: 9,
  output_tokens_details: { reasoning_tokens: reasoned ? 3 : 0 },
  total_tokens: 29,
});

/** A message item holding text or a refusal. */
const message = (n: number, part: "text" | "refusal", text: string): ResponseOutputMessage => ({
  id: `msg_fake_${n}`,
  type: "message",
  role: "assistant",
  status: "completed",
  content: [part === "text" ? { type: "output_text", text, annotations: [], logprobs: [] } : { type: "refusal", refusal: text }],
});

/** What the model says to a request: its output items, in order. */
function outputFor(body: Json, n: number): ResponseOutputItem[] {
  const model = String(body.model);
  const items: ResponseOutputItem[] = [];
  if (model.includes("reasoning")) {
    const reasoning: ResponseReasoningItem = {
      id: `rs_fake_${n}`,
      type: "reasoning",
      summary: summaries.map((text) => ({ type: "summary_text", text })),
      encrypted_content: `gAAAAB-fake-encrypted-${n}`,
    };
    if (model.includes("unsaid")) return [{ ...reasoning, status: "incomplete" }];
    items.push(reasoning);
  }
  const input = inputOf(body);
  const result = input.find((i) => i.type === "function_call_output");
  const tool = Array.isArray(body.tools) ? body.tools.filter(isObject)[0] : undefined;
  if (model.includes("refusal")) items.push(message(n, "refusal", refusalText));
  else if (result) items.push(message(n, "text", `The tool answered: ${typeof result.output === "string" ? result.output : JSON.stringify(result.output)}`));
  else if (tool) {
    const call: ResponseFunctionToolCall = {
      id: `fc_fake_${n}`,
      type: "function_call",
      status: "completed",
      call_id: `call_fake_${n}`,
      name: String(tool.name),
      arguments: '{"city":"Paris"}',
    };
    items.push(call);
  } else items.push(message(n, "text", greeting));
  return items;
}

/** The response object at some point of its life. */
function responseOf(body: Json, n: number, status: WireResponse["status"], output: ResponseOutputItem[], extra: Partial<WireResponse> = {}): Response {
  const wire: WireResponse = {
    id: `resp_fake_${n}`,
    object: "response",
    created_at: 1_760_000_000,
    status,
    background: false,
    error: null,
    incomplete_details: null,
    instructions: null,
    max_output_tokens: typeof body.max_output_tokens === "number" ? body.max_output_tokens : null,
    metadata: {},
    model: String(body.model),
    output,
    parallel_tool_calls: true,
    previous_response_id: null,
    service_tier: status === "in_progress" ? "auto" : "default",
    temperature: 1,
    text: { format: { type: "text" }, verbosity: "medium" },
    tool_choice: "auto",
    tools: [],
    top_p: 1,
    truncation: "disabled",
    ...extra,
  };
  // The SDK adds `output_text` when it reads a response; the wire has no such field.
  return wire as Response;
}

/** Two pieces of a text, as deltas arrive. */
const halves = (text: string): string[] => {
  const cut = Math.ceil(text.length / 2);
  return [text.slice(0, cut), text.slice(cut)].filter((piece) => piece !== "");
};

/** The events of a reasoning item: its summary parts one by one, in pieces, then the whole item. */
function reasoningEvents(item: ResponseReasoningItem, output_index: number): Unnumbered[] {
  const item_id = item.id;
  const events: Unnumbered[] = [{ type: "response.output_item.added", output_index, item: { id: item_id, type: "reasoning", summary: [] } }];
  item.summary.forEach(({ text }, summary_index) => {
    const at = { item_id, output_index, summary_index };
    events.push({ type: "response.reasoning_summary_part.added", ...at, part: { type: "summary_text", text: "" } });
    for (const delta of halves(text)) events.push({ type: "response.reasoning_summary_text.delta", ...at, delta });
    events.push({ type: "response.reasoning_summary_text.done", ...at, text });
    events.push({ type: "response.reasoning_summary_part.done", ...at, part: { type: "summary_text", text } });
  });
  events.push({ type: "response.output_item.done", output_index, item });
  return events;
}

/** The events of a message item: each content part opened, streamed in pieces and closed. */
function messageEvents(item: ResponseOutputMessage, output_index: number): Unnumbered[] {
  const item_id = item.id;
  const events: Unnumbered[] = [{ type: "response.output_item.added", output_index, item: { ...item, status: "in_progress", content: [] } }];
  item.content.forEach((part, content_index) => {
    const at = { item_id, output_index, content_index };
    const empty = part.type === "output_text" ? { ...part, text: "" } : { ...part, refusal: "" };
    events.push({ type: "response.content_part.added", ...at, part: empty });
    if (part.type === "output_text") {
      for (const delta of halves(part.text)) events.push({ type: "response.output_text.delta", ...at, delta, logprobs: [] });
      events.push({ type: "response.output_text.done", ...at, text: part.text, logprobs: [] });
    } else {
      for (const delta of halves(part.refusal)) events.push({ type: "response.refusal.delta", ...at, delta });
      events.push({ type: "response.refusal.done", ...at, refusal: part.refusal });
    }
    events.push({ type: "response.content_part.done", ...at, part });
  });
  events.push({ type: "response.output_item.done", output_index, item });
  return events;
}

/** The events of a function call item: added with no arguments, the arguments in pieces, then the whole call. */
function callEvents(item: ResponseFunctionToolCall, output_index: number): Unnumbered[] {
  const item_id = item.id ?? "";
  return [
    { type: "response.output_item.added", output_index, item: { ...item, status: "in_progress", arguments: "" } },
    ...halves(item.arguments).map((delta): Unnumbered => ({ type: "response.function_call_arguments.delta", item_id, output_index, delta })),
    { type: "response.function_call_arguments.done", item_id, output_index, name: item.name, arguments: item.arguments },
    { type: "response.output_item.done", output_index, item },
  ];
}

/** The events of one output item. */
function itemEvents(item: ResponseOutputItem, index: number): Unnumbered[] {
  if (item.type === "reasoning") return reasoningEvents(item, index);
  if (item.type === "message") return messageEvents(item, index);
  if (item.type === "function_call") return callEvents(item, index);
  return [];
}

/** The error a failing response carries: an overload, or a server error. */
const errorOf = (ending: Ending): Response["error"] =>
  ending === "overloaded"
    ? { code: "server_is_overloaded" as NonNullable<Response["error"]>["code"], message: "Our servers are currently overloaded. Please try again later." }
    : { code: "server_error", message: "The model failed mid-answer." };

/** A finished response: completed, cut short by the output limit, or failed. */
function finished(body: Json, n: number, ending: Ending, output: ResponseOutputItem[]): Response {
  const reasoned = output.some((i) => i.type === "reasoning");
  if (ending === "incomplete") return responseOf(body, n, "incomplete", output, { incomplete_details: { reason: "max_output_tokens" }, usage: usageOf(reasoned) });
  if (ending === "failed" || ending === "overloaded") return responseOf(body, n, "failed", [], { error: errorOf(ending) });
  return responseOf(body, n, "completed", output, { usage: usageOf(reasoned) });
}

/** The events of a streamed answer in OpenAI's order; a failing one stops after its first words. */
function streamEvents(body: Json, n: number, ending: Ending): Unnumbered[] {
  const output = outputFor(body, n);
  const events: Unnumbered[] = [
    { type: "response.created", response: responseOf(body, n, "in_progress", []) },
    { type: "response.in_progress", response: responseOf(body, n, "in_progress", []) },
    ...output.flatMap(itemEvents),
  ];
  if (ending === "completed" || ending === "incomplete") {
    const response = finished(body, n, ending, output);
    return [...events, ending === "completed" ? { type: "response.completed", response } : { type: "response.incomplete", response }];
  }
  const firstWords = events.findIndex((e) => e.type === "response.output_text.delta");
  const head = events.slice(0, firstWords + 1);
  if (ending === "cut") return head;
  if (ending === "error-event") return [...head, { type: "error", code: "rate_limit_exceeded", message: "Rate limit reached for requests.", param: null }];
  return [...head, { type: "response.failed", response: finished(body, n, ending, output) }];
}

/** Writes events as OpenAI does: an `event:` line and a `data:` line each, numbered from 0, split across writes. */
function writeStream(res: ServerResponse, events: Unnumbered[]): void {
  res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8" });
  events.forEach((e, sequence_number) => {
    const frame = `event: ${e.type}\ndata: ${JSON.stringify({ ...e, sequence_number })}\n\n`;
    const cut = Math.floor(frame.length / 2);
    res.write(frame.slice(0, cut));
    res.write(frame.slice(cut));
  });
  res.end();
}

/** Answers one request whole: a 500 for `fail`, the failed response for `overloaded`, else the finished response. */
function writeBuffered(res: ServerResponse, body: Json, n: number, ending: Ending): void {
  if (ending === "failed") {
    const error = { message: "The server had an error while processing your request.", type: "server_error", param: null, code: "server_error" };
    return void res.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify({ error }));
  }
  const response = finished(body, n, ending === "completed" || ending === "incomplete" || ending === "overloaded" ? ending : "completed", outputFor(body, n));
  res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(response));
}

/** OpenAI's Responses API on 127.0.0.1, buffered and streamed, answering as the model name asks (see `Ending`). */
export async function startFakeResponses(): Promise<FakeResponses> {
  const fake: FakeResponses = { baseUrl: "", requests: [], stop: async () => {} };
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (req.method !== "POST" || req.url !== "/v1/responses") {
      return void res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "Not found", type: "invalid_request_error" } }));
    }
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Json;
    fake.requests.push({ body, ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}) });
    const n = fake.requests.length;
    const ending = endingOf(String(body.model));
    if (body.stream === true) writeStream(res, streamEvents(body, n, ending));
    else writeBuffered(res, body, n, ending);
  });
  Object.assign(fake, await listenLocal(server));
  return fake;
}
