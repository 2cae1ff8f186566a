import {
  serverToolCallType,
  type ChatCompletionRequest,
  type serverToolItemTypes,
  type ResponsesContentPart,
  type ResponsesFunctionTool,
  type ResponsesInputItem,
  type ResponsesRequest,
  type ResponsesTextFormat,
  type ResponsesToolChoice,
} from "@switchyard/contracts";
import { badRequest } from "@switchyard/runtime";
import { formatFields } from "../../providers/chat-parts.js";
import { chatNameOf, isNamespace, namespacedNames, type NamespacedNames } from "./namespaces.js";
import { anthropicFormat, openAiFormat, unseal } from "./reasoning.js";

type Message = Record<string, unknown>;
type Detail = Record<string, unknown> & { type: string };
type Item<T extends ResponsesInputItem["type"]> = Extract<ResponsesInputItem, { type: T }>;
type ServerItem = Extract<ResponsesInputItem, { type: (typeof serverToolItemTypes)[number] }>;

/** A Responses request as the gateway runs it. */
export interface MappedRequest {
  /** A body `chatCompletionRequest` parses: the normalised request every provider path takes. */
  chat: Record<string, unknown>;
  /**
   * The reasoning summary the client asked for (`reasoning.summary`), null when none. The renderers show
   * the model's reasoning text as summary parts when it is set, as reasoning text otherwise.
   */
  summary: "auto" | "concise" | "detailed" | null;
}

/**
 * An image given by a provider's file id, as chat carries it: a file part marked with the image's `detail`.
 * Only OpenAI's Responses API takes it (as an `input_image` again); other endpoints cannot carry it.
 */
export const imageByFileId = (fileId: string, detail: string): Message => ({ type: "file", file: { file_id: fileId }, image_detail: detail });

/** Whether chat messages hold an image given by file id. */
export const holdsImageByFileId = (messages: unknown): boolean =>
  Array.isArray(messages) &&
  messages.some((m: { content?: unknown }) => Array.isArray(m.content) && m.content.some((p: Message) => p.type === "file" && typeof p.image_detail === "string"));

/** One content part as chat takes it. */
function chatPart(part: ResponsesContentPart): Message {
  switch (part.type) {
    case "input_text": {
      const { text, cache_control, prompt_cache_breakpoint } = part;
      return { type: "text", text, ...(cache_control ? { cache_control } : {}), ...(prompt_cache_breakpoint ? { prompt_cache_breakpoint } : {}) };
    }
    case "output_text":
      return { type: "text", text: part.text };
    case "input_image":
      if (part.image_url) return { type: "image_url", image_url: { url: part.image_url, ...(part.detail ? { detail: part.detail } : {}) } };
      return imageByFileId(part.file_id ?? "", part.detail ?? "auto");
    case "input_file": {
      const data = part.file_data ?? part.file_url;
      return { type: "file", file: { ...(part.filename ? { filename: part.filename } : {}), ...(data ? { file_data: data } : {}), ...(part.file_id ? { file_id: part.file_id } : {}) } };
    }
    case "input_audio":
      return { type: "input_audio", input_audio: part.input_audio };
    case "refusal":
      return { type: "text", text: part.refusal };
  }
}

/** A message's content as chat takes it: a string stays one. */
const chatContent = (content: string | ResponsesContentPart[]): string | Message[] => (typeof content === "string" ? content : content.map(chatPart));

/**
 * A reasoning item as the `reasoning_details` entries it came from; its summaries and encrypted content share
 * its id. What a provider needs to continue comes from `encrypted_content` (see `./reasoning.ts`): unmarked
 * it is OpenAI's, unless the item names another `format`; the `signature` field of older clients is a
 * thinking block's signature. Entries of OpenAI's, Anthropic's or Gemini's format are marked to reach only
 * that provider (`formatFields`).
 */
export function reasoningDetails(item: Item<"reasoning">): Detail[] {
  const content = item.encrypted_content ?? undefined;
  const sealed = content ? unseal(content) : undefined;
  const signature = sealed ? (sealed.kind === "signature" ? sealed.value : undefined) : (item.signature ?? undefined);
  const data = sealed ? (sealed.kind === "encrypted" ? sealed.value : undefined) : content;
  const named = sealed?.format ?? item.format ?? (data ? openAiFormat : signature ? anthropicFormat : undefined);
  // The reasoning of a provider the gateway has an adapter for goes back to that provider alone.
  const format = named ? formatFields(named) : {};
  const entryId = sealed ? sealed.id : item.id;
  const id = entryId ? { id: entryId } : {};
  const texts = (item.content ?? []).map((c) => c.text);
  const summaries = (item.summary ?? []).map((s) => s.text);
  const out: Detail[] = [];
  if (signature) out.push({ type: "reasoning.text", text: (texts.length ? texts : summaries).join(""), signature, ...format });
  else {
    for (const text of texts) out.push({ type: "reasoning.text", text, ...format });
    for (const summary of summaries) out.push({ type: "reasoning.summary", summary, ...id, ...format });
  }
  if (data) out.push({ type: "reasoning.encrypted", data, ...id, ...format });
  return out;
}

/** Fields of a server tool item that say what the call was, not what it returned. */
const bookkeeping = new Set(["type", "id", "status", "call_id", "arguments"]);

/** The arguments a server tool item implies when it does not carry them. */
function impliedArguments(item: ServerItem): Record<string, unknown> {
  const action = (item.action ?? {}) as Record<string, unknown>;
  if (item.type === "openrouter:web_search") return { query: action.query ?? "" };
  if (item.type === "openrouter:web_fetch") return { url: typeof item.url === "string" ? item.url : "" };
  if (item.type === "openrouter:datetime") return item.timezone ? { timezone: item.timezone } : {};
  if (item.type === "openrouter:bash") return { command: item.command ?? "" };
  return { commands: action.commands ?? [], ...(action.timeout_ms ? { timeout_ms: action.timeout_ms } : {}) };
}

/** A server tool call an earlier answer showed, as the entry chat replays as the call and its result. */
export function serverCallDetail(item: ServerItem): Detail {
  const result = Object.fromEntries(Object.entries(item).filter(([key]) => !bookkeeping.has(key)));
  return {
    type: serverToolCallType,
    tool_name: item.type,
    tool_call_id: item.call_id ?? item.id ?? null,
    arguments: item.arguments ?? JSON.stringify(impliedArguments(item)),
    result: JSON.stringify(result),
  };
}

/**
 * Input items as chat messages. An assistant turn is its message, the function calls after it, and the
 * reasoning and server tool calls before it, which ride on the turn's `reasoning_details`.
 */
class Conversation {
  readonly messages: Message[] = [];
  private turn: Message | null = null;
  private pending: Detail[] = [];

  /** `names`: the request's namespaced functions, whose earlier calls the provider knows by their chat names. */
  constructor(private readonly names: NamespacedNames) {}

  /** Takes the next input item. */
  add(item: ResponsesInputItem): void {
    if (item.type === "message") this.message(item);
    else if (item.type === "function_call") this.call(item);
    else if (item.type === "function_call_output") this.output(item);
    else if (item.type === "reasoning") this.pending.push(...reasoningDetails(item));
    else if (item.type !== "item_reference") this.pending.push(serverCallDetail(item));
  }

  /** The messages, with reasoning left at the end kept on the last turn. */
  end(): Message[] {
    this.close();
    return this.messages;
  }

  /** A message; an assistant's fills the open turn when that has no words yet (its calls came first). */
  private message(item: Item<"message">): void {
    if (item.role !== "assistant") {
      this.close();
      this.messages.push({ role: item.role === "developer" ? "system" : item.role, content: chatContent(item.content ?? "") });
      return;
    }
    const parts = typeof item.content === "string" || item.content === null ? null : item.content;
    const text = parts ? parts.flatMap((p) => ("text" in p && typeof p.text === "string" ? [p.text] : [])).join("") : (item.content ?? "");
    const refusals = parts?.flatMap((p) => (p.type === "refusal" ? [p.refusal] : [])) ?? [];
    const open = this.turn;
    const turn = open && open.content === null ? open : this.open();
    turn.content = text;
    if (refusals.length) turn.refusal = refusals.join("");
    this.attach(turn);
  }

  /** A function call joins the open assistant turn; a namespaced function's under its chat name. */
  private call(item: Item<"function_call">): void {
    const turn = this.turn ?? this.open();
    const calls = (turn.tool_calls as unknown[] | undefined) ?? [];
    const name = item.namespace ? chatNameOf(this.names, { namespace: item.namespace, name: item.name }) : item.name;
    turn.tool_calls = [...calls, { id: item.call_id, type: "function", function: { name, arguments: item.arguments } }];
    this.attach(turn);
  }

  /** A function's result, as a tool message. */
  private output(item: Item<"function_call_output">): void {
    this.close();
    this.messages.push({ role: "tool", tool_call_id: item.call_id, content: typeof item.output === "string" ? item.output : item.output.map(chatPart) });
  }

  /** A new assistant turn, with no words yet; reasoning waiting for a turn is this one's. */
  private open(): Message {
    const turn: Message = { role: "assistant", content: null };
    this.messages.push(turn);
    this.turn = turn;
    return turn;
  }

  /** Reasoning waiting for its turn joins this one. */
  private attach(turn: Message): void {
    if (!this.pending.length) return;
    turn.reasoning_details = [...((turn.reasoning_details as Detail[] | undefined) ?? []), ...this.pending];
    this.pending = [];
  }

  /** Ends the open turn; reasoning with no turn after it stays on this one, or makes one of its own. */
  private close(): void {
    if (this.pending.length) this.attach(this.turn ?? this.open());
    this.turn = null;
  }
}

/** The conversation as chat messages: instructions first, as a system message. */
export function chatMessages(request: Pick<ResponsesRequest, "input" | "instructions">, names: NamespacedNames = new Map()): Message[] {
  const leading: Message[] = request.instructions ? [{ role: "system", content: request.instructions }] : [];
  if (typeof request.input === "string") return [...leading, { role: "user", content: request.input }];
  const conversation = new Conversation(names);
  for (const item of request.input ?? []) conversation.add(item);
  return [...leading, ...conversation.end()];
}

/** A function tool in chat's shape, under `name`. */
function chatFunction(tool: ResponsesFunctionTool, name: string): Record<string, unknown> {
  const { description, parameters, strict } = tool;
  const fn = { name, ...(description ? { description } : {}), ...(parameters ? { parameters } : {}), ...(strict != null ? { strict } : {}) };
  return { type: "function", function: fn };
}

/**
 * A tool as chat's tools: a function tool in chat's shape, each function of a namespace tool as a function
 * tool under its chat name (`names`); server tools are declared the same way in both dialects.
 */
function chatTools(tool: NonNullable<ResponsesRequest["tools"]>[number], names: NamespacedNames): Array<Record<string, unknown>> {
  if (isNamespace(tool)) return tool.tools.map((fn) => chatFunction(fn, chatNameOf(names, { namespace: tool.name, name: fn.name })));
  if (tool.type !== "function") return [tool];
  const fn = tool as ResponsesFunctionTool;
  return [chatFunction(fn, fn.name)];
}

/**
 * A tool choice the tools cannot meet (`required` with no tool, a function none of them is) is refused: an
 * endpoint would ignore or drop it, and a setting is never dropped silently. It reads the request in chat's
 * shape once its preset is applied, so that a preset's tools and tool choice count as the request's own.
 */
export function checkToolChoice(request: Pick<ChatCompletionRequest, "tools" | "tool_choice">): void {
  const choice = request.tool_choice;
  const tools = request.tools ?? [];
  if (choice === "required" && tools.length === 0) throw badRequest('Invalid body: tool_choice: is "required" but the request declares no tools');
  if (typeof choice !== "object" || choice.type !== "function" || !("function" in choice)) return;
  const name = choice.function.name;
  if (tools.some((tool) => tool.type === "function" && (tool as { function?: { name?: unknown } }).function?.name === name)) return;
  throw badRequest(`Invalid body: tool_choice: names the function ${name}, which is not among the request's tools`);
}

/** A named function choice in chat's shape; the others are the same in both dialects. */
const chatToolChoice = (choice: ResponsesToolChoice): unknown =>
  typeof choice === "object" && choice.type === "function" ? { type: "function", function: { name: choice.name } } : choice;

/** `text.format` as chat's `response_format`. */
function responseFormat(format: ResponsesTextFormat): Record<string, unknown> {
  if (format.type !== "json_schema") return { type: format.type };
  const { name, schema, description, strict } = format;
  return { type: "json_schema", json_schema: { name, schema, ...(description ? { description } : {}), ...(strict != null ? { strict } : {}) } };
}

/** Settings that mean the same in both dialects, copied when given. */
const shared = [
  "model",
  "models",
  "provider",
  "plugins",
  "metadata",
  "session_id",
  "temperature",
  "top_p",
  "top_k",
  "frequency_penalty",
  "presence_penalty",
  "parallel_tool_calls",
  "max_tool_calls",
  "prompt_cache_key",
  "prompt_cache_options",
  "cache_control",
  "service_tier",
  "stream",
  "trace",
  "stop_server_tools_when",
  "reasoning",
] as const satisfies ReadonlyArray<keyof ResponsesRequest>;

/**
 * The Responses request as the normalised chat request, and the reasoning summary it asked for. The end
 * user's ids never leave raw: `user` and `safety_identifier`, which OpenAI's Responses API takes beside
 * `user`, are hashed with the rest of chat's (per workspace). Providers without a place for the latter get
 * it as `user` when the request has none. Its tool choice is checked once its preset is applied (`checkToolChoice`).
 * A namespace tool's functions reach chat as function tools named `<namespace>__<name>` (see `./namespaces.ts`).
 */
export function toChatRequest(request: ResponsesRequest): MappedRequest {
  const names = namespacedNames(request.tools);
  const chat: Record<string, unknown> = { messages: chatMessages(request, names) };
  for (const key of shared) if (request[key] !== undefined && request[key] !== null) chat[key] = request[key];
  const user = request.user ?? request.safety_identifier;
  if (user) chat.user = user;
  if (request.safety_identifier) chat.safety_identifier = request.safety_identifier;
  if (request.include?.length) chat.include = request.include;
  if (request.client_metadata) chat.client_metadata = request.client_metadata;
  if (request.max_output_tokens != null) chat.max_tokens = request.max_output_tokens;
  if (request.text?.format) chat.response_format = responseFormat(request.text.format);
  if (request.text?.verbosity) chat.verbosity = request.text.verbosity;
  if (request.tools?.length) chat.tools = request.tools.flatMap((tool) => chatTools(tool, names));
  if (request.tool_choice !== undefined) chat.tool_choice = chatToolChoice(request.tool_choice);
  return { chat, summary: request.reasoning?.summary ?? null };
}
