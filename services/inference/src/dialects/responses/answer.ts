import {
  serverToolCallType,
  type ResponseObject,
  type ResponseOutputItem,
  type ResponseUsage,
  type ResponsesFunctionTool,
  type ResponsesRequest,
  type ServerToolCallDetail,
} from "@switchyard/contracts";
import { picoToUsd } from "@switchyard/runtime";
import type { Completion, CompletionChoice, Passthrough } from "../../generation/parts.js";
import { normalizeFinishReason, type Accounted } from "../../accounting.js";
import type { Detail } from "../../tools/reasoning.js";
import { objectOf, record, text } from "../../json.js";
import { clientName, isNamespace, namespacedNames, type NamespacedNames } from "./namespaces.js";
import { encryptedContent, type Continuation } from "./reasoning.js";

type Item<T extends ResponseOutputItem["type"]> = Extract<ResponseOutputItem, { type: T }>;
type ItemStatus = "in_progress" | "completed" | "incomplete";
export type ToolUse = ResponseUsage["server_tool_use_details"];
/** A part of a message: its words, or the model's refusal. */
export type MessagePart = Item<"message">["content"][number];
export type Citation = Extract<MessagePart, { type: "output_text" }>["annotations"][number];

/** The request's settings an answer repeats, with the nulls the SDKs require. */
export type RequestEcho = Omit<ResponseObject, "id" | "object" | "created_at" | "completed_at" | "status" | "error" | "incomplete_details" | "model" | "output" | "output_text" | "usage">;

/** What every `response` object of one request shares. */
export interface ResponseFrame {
  /** The generation id, exactly: `GET /generation?id=` finds it. */
  id: string;
  /** Unix seconds. */
  createdAt: number;
  /** The model that served the request. */
  model: string;
  echo: RequestEcho;
  /** Show the model's reasoning text as summary parts (the request asked for `reasoning.summary`). */
  summarize: boolean;
  /** Leave reasoning out (`reasoning.exclude`). */
  hideReasoning: boolean;
  /** The request's namespaced functions by their chat names: calls of them show the function's name and namespace. */
  names: NamespacedNames;
}

/** How the answer ended: `completed`, `incomplete` with its reason, `failed` with its error. */
export interface Outcome {
  status: ResponseObject["status"];
  incomplete_details: ResponseObject["incomplete_details"];
  error: ResponseObject["error"];
}

/**
 * A function tool as the answer repeats it; server tools come back as declared. A tool that left `strict`
 * out shows OpenAI's documented default, true.
 */
function echoTool(tool: NonNullable<ResponsesRequest["tools"]>[number]): RequestEcho["tools"][number] {
  if (isNamespace(tool)) return { type: "namespace", name: tool.name, description: tool.description ?? "", tools: tool.tools.map(echoFunction) };
  if (tool.type !== "function") return tool;
  return echoFunction(tool as ResponsesFunctionTool);
}

/** A function tool as the answer repeats it. */
function echoFunction(tool: ResponsesFunctionTool) {
  const { name, description, parameters, strict } = tool;
  return { type: "function" as const, name, description: description ?? null, parameters: parameters ?? null, strict: strict ?? true };
}

const knownChoices = new Set(["web_search_preview", "web_search_preview_2025_03_11", "shell", "apply_patch"]);

/** The tool choice as the SDKs read it: a server tool by a type they do not know reads as `required`. */
function echoToolChoice(choice: ResponsesRequest["tool_choice"]): RequestEcho["tool_choice"] {
  if (choice === undefined) return "auto";
  if (typeof choice === "string") return choice;
  if (choice.type === "function" && choice.name) return { type: "function", name: choice.name };
  return knownChoices.has(choice.type) ? ({ type: choice.type } as RequestEcho["tool_choice"]) : "required";
}

/** The request's settings as every `response` object of its answer repeats them. */
export function echoRequest(request: ResponsesRequest): RequestEcho {
  const verbosity = request.text?.verbosity;
  return {
    instructions: request.instructions ?? null,
    tools: (request.tools ?? []).map(echoTool),
    tool_choice: echoToolChoice(request.tool_choice),
    parallel_tool_calls: request.parallel_tool_calls ?? true,
    temperature: request.temperature ?? null,
    top_p: request.top_p ?? null,
    presence_penalty: request.presence_penalty ?? null,
    frequency_penalty: request.frequency_penalty ?? null,
    max_output_tokens: request.max_output_tokens ?? null,
    max_tool_calls: request.max_tool_calls ?? null,
    metadata: request.metadata ?? {},
    reasoning: { effort: request.reasoning?.effort ?? null, summary: request.reasoning?.summary ?? null },
    text: { format: request.text?.format ?? { type: "text" }, ...(verbosity ? { verbosity } : {}) },
    user: request.user ?? null,
    safety_identifier: request.safety_identifier ?? null,
    prompt_cache_key: request.prompt_cache_key ?? null,
    service_tier: request.service_tier ?? null,
    store: false,
    background: false,
    truncation: "disabled",
    previous_response_id: null,
  };
}

/** The frame of one request's answer. */
export function responseFrame(request: ResponsesRequest, id: string, createdAt: number, model: string): ResponseFrame {
  const summarize = request.reasoning?.summary !== undefined && request.reasoning.summary !== null;
  return { id, createdAt, model, echo: echoRequest(request), summarize, hideReasoning: request.reasoning?.exclude === true, names: namespacedNames(request.tools) };
}

/** Item ids unique within one response, made from the generation id. */
export class ItemIds {
  private count = 0;
  private readonly used = new Set<string>();
  private readonly token: string;

  constructor(generationId: string) {
    this.token = generationId.replace(/^gen-/, "").replace(/[^A-Za-z0-9]/g, "");
  }

  /** A new id such as `msg_<token>_3`. */
  next(prefix: string): string {
    const id = `${prefix}_${this.token}_${this.count++}`;
    this.used.add(id);
    return id;
  }

  /** The provider's own id when no item of this response has it yet, else a new one. */
  keep(id: string, prefix: string): string {
    if (this.used.has(id)) return this.next(prefix);
    this.used.add(id);
    return id;
  }
}

/** The priced usage as Responses states it, with OpenRouter's cost fields. */
export function usageObject(accounted: Accounted, toolUse?: ToolUse): ResponseUsage {
  const { usage } = accounted;
  return {
    input_tokens: usage.promptTokens,
    input_tokens_details: { cached_tokens: usage.cachedTokens, ...(usage.cacheWriteTokens ? { cache_write_tokens: usage.cacheWriteTokens } : {}) },
    output_tokens: usage.completionTokens,
    output_tokens_details: { reasoning_tokens: usage.reasoningTokens },
    total_tokens: usage.promptTokens + usage.completionTokens,
    cost: picoToUsd(accounted.billed),
    is_byok: accounted.isByok,
    cost_details: {
      upstream_inference_cost: picoToUsd(accounted.cost.total),
      upstream_inference_input_cost: picoToUsd(accounted.cost.prompt),
      upstream_inference_output_cost: picoToUsd(accounted.cost.completion),
    },
    server_tool_use_details: toolUse ?? { tool_calls_requested: 0, tool_calls_executed: 0 },
  };
}

/** A finished answer's status from the provider's finish reason. */
export function outcomeOf(finishReason: string | null | undefined): Outcome {
  const reason = normalizeFinishReason(finishReason);
  if (reason === "length") return { status: "incomplete", incomplete_details: { reason: "max_output_tokens" }, error: null };
  if (reason === "content_filter") return { status: "incomplete", incomplete_details: { reason: "content_filter" }, error: null };
  return { status: "completed", incomplete_details: null, error: null };
}

/** The status an item left open at the end takes. */
export const closingStatus = (outcome: Outcome): "completed" | "incomplete" => (outcome.status === "completed" ? "completed" : "incomplete");

/** A message's output_text part. */
export const outputText = (text: string, annotations: Citation[] = []) => ({ type: "output_text" as const, text, annotations, logprobs: [] });

/** A message's refusal part: the model declined, and says why. */
export const refusalPart = (refusal: string) => ({ type: "refusal" as const, refusal });

/** An answer's message item: its words, then its refusal when the model declined. */
export function messageItem(id: string, content: MessagePart[], status: ItemStatus): Item<"message"> {
  return { type: "message", id, role: "assistant", status, content };
}

/** A provider's refusal, from the message fields the gateway passes through; "" when it gave none. */
export const refusalOf = (fields: Passthrough): string => (typeof fields.refusal === "string" ? fields.refusal : "");

/** A call of one of the client's functions, by the chat name it was called by: a namespaced function's shows its own name and namespace. */
export function functionCallItem(id: string, callId: string, chatName: string, args: string, status: ItemStatus, names: NamespacedNames = new Map()): Item<"function_call"> {
  const { name, namespace } = clientName(names, chatName);
  return { type: "function_call", id, call_id: callId, name, ...(namespace ? { namespace } : {}), arguments: args, status };
}

/** One reasoning item's content, gathered: its text, and what the provider needs to continue from it. */
export interface Reasoning extends Continuation {
  id: string;
  summary: string[];
  /** The model's own reasoning text, when it is not shown as a summary. */
  text: string | null;
}

/**
 * A reasoning item: summary parts, the model's own text, and in `encrypted_content` what a later request
 * must send back (marked with its provider's format when it is not OpenAI's; see `./reasoning.ts`).
 */
export function reasoningItem(r: Reasoning, status: ItemStatus): Item<"reasoning"> {
  const sealed = encryptedContent(r);
  return {
    type: "reasoning",
    id: r.id,
    status,
    summary: r.summary.map((text) => ({ type: "summary_text" as const, text })),
    ...(r.text !== null ? { content: [{ type: "reasoning_text" as const, text: r.text }] } : {}),
    ...(sealed ? { encrypted_content: sealed } : {}),
    ...(r.format ? { format: r.format } : {}),
  };
}


const serverPrefixes: Record<string, string> = { "openrouter:web_search": "ws", "openrouter:web_fetch": "wf", "openrouter:datetime": "dt", "openrouter:bash": "bash", "openrouter:shell": "sh" };

/** The item id prefix of a server tool's calls. */
export const serverPrefix = (toolName: string): string => serverPrefixes[toolName] ?? "st";

/** A server tool call the gateway ran, as the `openrouter:*` item OpenRouter shows it with. */
export function serverToolItem(call: ServerToolCallDetail, id: string): ResponseOutputItem {
  const args = objectOf(call.arguments);
  const result = objectOf(call.result);
  const error = typeof result.error === "string" ? result.error : undefined;
  const failed = error !== undefined;
  const containerId = typeof result.container_id === "string" ? { container_id: result.container_id } : {};
  const base = { id, call_id: call.tool_call_id ?? null, arguments: call.arguments, ...containerId, ...(failed ? { error } : {}) };
  switch (call.tool_name) {
    case "openrouter:web_fetch": {
      const status = Number.isInteger(result.status) ? { httpStatus: result.status as number } : {};
      const title = typeof result.title === "string" ? { title: result.title } : {};
      const content = typeof result.content === "string" ? { content: result.content } : {};
      const url = text(result.url) || text(args.url);
      return { type: call.tool_name, id, status: failed ? "incomplete" : "completed", ...(url ? { url } : {}), ...title, ...content, ...status, ...(failed ? { error } : {}) };
    }
    case "openrouter:datetime":
      return { type: call.tool_name, id, status: failed ? "incomplete" : "completed", datetime: text(result.datetime), timezone: text(result.timezone) || text(args.timezone) || "UTC" };
    case "openrouter:bash": {
      const exit = result.exit_code;
      return {
        type: call.tool_name,
        ...base,
        status: failed ? "failed" : "completed",
        command: text(args.command),
        ...(typeof result.stdout === "string" ? { stdout: result.stdout, stderr: text(result.stderr) } : {}),
        ...(Number.isInteger(exit) ? { exitCode: exit as number } : {}),
      };
    }
    case "openrouter:shell": {
      const runs = Array.isArray(result.results) ? result.results.map(record) : [];
      const output = runs.map((r) => ({
        stdout: text(r.stdout),
        stderr: text(r.stderr),
        outcome: r.timed_out === true || !Number.isInteger(r.exit_code) ? { type: "timeout" as const } : { type: "exit" as const, exit_code: r.exit_code as number },
      }));
      const commands = Array.isArray(args.commands) ? args.commands.filter((c): c is string => typeof c === "string") : [];
      const timeout = Number.isInteger(args.timeout_ms) ? { timeout_ms: args.timeout_ms as number } : {};
      return { type: call.tool_name, ...base, status: failed ? "failed" : "completed", action: { commands, ...timeout }, ...(runs.length ? { output } : {}) };
    }
    default: {
      // The only other tool the gateway runs is openrouter:web_search.
      const found = Array.isArray(result.results) ? result.results.map(record) : [];
      const sources = found.map((r) => ({ type: "url" as const, url: text(r.url) }));
      return { type: "openrouter:web_search", id, status: failed ? "incomplete" : "completed", action: { type: "search", query: text(args.query), sources } };
    }
  }
}

/** Web citations a provider gave in chat's shape (`url_citation: {...}`) as Responses annotations. */
export function citationsOf(fields: Passthrough): Citation[] {
  const list = Array.isArray(fields.annotations) ? fields.annotations.map(record) : [];
  return list.flatMap((a) => {
    const c = record(a.url_citation ?? a);
    if (a.type !== "url_citation" || typeof c.url !== "string") return [];
    const start = Number.isInteger(c.start_index) ? (c.start_index as number) : 0;
    return [{ type: "url_citation" as const, url: c.url, title: text(c.title), start_index: start, end_index: Number.isInteger(c.end_index) ? (c.end_index as number) : start }];
  });
}

/** The `response` object: the frame, the output in order, how it ended and its usage. */
export function responseObject(frame: ResponseFrame, output: ResponseOutputItem[], outcome: Outcome, usage: ResponseUsage | null, completedAt: number | null, serviceTier?: string | null): ResponseObject {
  const said = output.flatMap((item) => (item.type === "message" ? item.content.flatMap((c) => (c.type === "output_text" ? [c.text] : [])) : []));
  return {
    id: frame.id,
    object: "response",
    created_at: frame.createdAt,
    completed_at: completedAt,
    ...outcome,
    model: frame.model,
    output,
    output_text: said.join(""),
    ...frame.echo,
    service_tier: serviceTier ?? frame.echo.service_tier,
    usage,
  };
}

/** A buffered choice's reasoning as items: summaries in one, each thinking block in one, encrypted data kept. */
function reasoningOf(choice: CompletionChoice, frame: ResponseFrame, ids: ItemIds): Reasoning[] {
  const details = choice.reasoningDetails.filter((d) => d.type !== serverToolCallType);
  const format = (d: Detail) => (typeof d.format === "string" ? { format: d.format } : {});
  const entry = (d: Detail) => (text(d.id) ? { entryId: text(d.id) } : {});
  const shown = (value: string) => (frame.summarize ? { summary: [value], text: null } : { summary: [], text: value });
  const items: Reasoning[] = [];
  // Summaries the provider named by its reasoning item's id stay that item, under that id; the rest are one item.
  const named = new Map<string, Reasoning>();
  const summaries = details.filter((d) => d.type === "reasoning.summary");
  for (const d of summaries) {
    let item = named.get(text(d.id));
    if (!item) {
      item = { id: text(d.id) ? ids.keep(text(d.id), "rs") : ids.next("rs"), summary: [], text: null, ...format(d), ...entry(d) };
      named.set(text(d.id), item);
      items.push(item);
    }
    item.summary.push(text(d.summary));
  }
  const blocks = details.filter((d) => d.type === "reasoning.text");
  for (const d of blocks) items.push({ id: ids.next("rs"), ...shown(text(d.text)), ...(text(d.signature) ? { signature: text(d.signature) } : {}), ...format(d), ...entry(d) });
  if (!summaries.length && !blocks.length && choice.reasoning) items.push({ id: ids.next("rs"), ...shown(choice.reasoning) });
  // Encrypted reasoning joins the summaries of its item, or the first item without summaries; else it is an item of its own.
  for (const d of details.filter((e) => e.type === "reasoning.encrypted")) {
    const open = text(d.id) ? named.get(text(d.id)) : items.find((r) => !r.encrypted && !r.signature);
    if (open && !open.encrypted) Object.assign(open, { encrypted: text(d.data), ...format(d), ...entry(d) });
    else items.push({ id: text(d.id) ? ids.keep(text(d.id), "rs") : ids.next("rs"), summary: [], text: null, encrypted: text(d.data), ...format(d), ...entry(d) });
  }
  return items;
}

/** Encrypted reasoning with no text of its own: its stream adds it whole, completed, as it arrives. */
const standalone = (r: Reasoning): boolean => r.encrypted !== undefined && !r.signature && r.text === null && r.summary.length === 0;

/** What a buffered answer is made of. */
export interface AnswerInput {
  frame: ResponseFrame;
  completion: Completion;
  /** Usage and cost of the whole request; null when it is not known. */
  accounted: Accounted | null;
  /** The server tool calls the gateway ran, in order. */
  serverCalls?: readonly ServerToolCallDetail[];
  toolUse?: ToolUse;
  /** Unix seconds; now when not given. */
  completedAt?: number;
}

/**
 * The non-streaming `response`: the server tool calls that ran, then choice 0's reasoning, its message and
 * its function calls. Other choices have no place in this dialect's single output list.
 */
export function responseBody(input: AnswerInput): ResponseObject {
  const { frame, completion } = input;
  const ids = new ItemIds(frame.id);
  const choice = completion.choices.find((c) => c.index === 0) ?? completion.choices[0];
  const outcome = outcomeOf(choice?.finishReason ?? "stop");
  const last = closingStatus(outcome);
  const output: ResponseOutputItem[] = (input.serverCalls ?? []).map((call) => serverToolItem(call, ids.next(serverPrefix(call.tool_name))));
  if (choice) {
    // The items its stream would show: a message only when the model said words or refused, each item
    // completed once another follows it, the last left open at the end taking the answer's closing status.
    const items: Array<{ make: (status: ItemStatus) => ResponseOutputItem; open: boolean }> = [];
    for (const r of frame.hideReasoning ? [] : reasoningOf(choice, frame, ids)) items.push({ make: (status) => reasoningItem(r, status), open: !standalone(r) });
    const refusal = refusalOf(choice.fields);
    const content: MessagePart[] = [...(choice.text ? [outputText(choice.text, citationsOf(choice.fields))] : []), ...(refusal ? [refusalPart(refusal)] : [])];
    if (content.length) {
      const id = ids.next("msg");
      items.push({ make: (status) => messageItem(id, content, status), open: true });
    }
    for (const call of choice.toolCalls) {
      const id = ids.next("fc");
      items.push({ make: () => functionCallItem(id, call.id, call.function.name, call.function.arguments, "completed", frame.names), open: false });
    }
    items.forEach((item, i) => output.push(item.make(item.open && i === items.length - 1 ? last : "completed")));
  }
  const usage = input.accounted ? usageObject(input.accounted, input.toolUse) : null;
  const completedAt = input.completedAt ?? Math.floor(Date.now() / 1000);
  return responseObject(frame, output, outcome, usage, completedAt, completion.serviceTier);
}
