import { anthropicOnlyFields, unrelayedFields, type MessagesContentBlock, type MessagesCountTokensRequest, type MessagesRequest, type MessagesTool } from "@switchyard/contracts";
import { badRequest } from "@switchyard/runtime";
import { createHash } from "node:crypto";
import { formatFields } from "../../providers/chat-parts.js";
import { clearedThinking, thinkingTurnsKept } from "./context-editing.js";
import { toolFunctionName } from "../../tools/declared.js";
import { replayedResult, replayedTool, resultTypes } from "./server-calls.js";

type Json = Record<string, unknown>;
type Block<T extends string> = Extract<MessagesContentBlock, { type: T }>;

/** The `format` of Anthropic's reasoning entries, as its adapter reads them back. */
export const anthropicReasoningFormat = "anthropic-claude-v1";

/**
 * Another provider's signed or encrypted reasoning (Gemini's thought signatures, OpenAI's encrypted
 * reasoning) rides in a thinking block's `signature` or a redacted block's `data` with its format and entry
 * id in front, so that sent back it reaches the provider that made it as that provider's own, and never
 * passes for Anthropic's.
 */
const foreignMark = /^switchyard:([A-Za-z0-9_.-]+):([^:]*):/;

export function wrapReasoning(entry: Record<string, unknown>, value: string): string {
  const { format, id } = entry;
  if (typeof format !== "string" || !format || format === anthropicReasoningFormat) return value;
  return `switchyard:${format}:${typeof id === "string" ? id : ""}:${value}`;
}

/** A signature or encrypted data sent back, with the format (and entry id) it belongs to. */
export function unwrapReasoning(value: string): { format: string; id?: string; value: string } {
  const mark = foreignMark.exec(value);
  if (!mark) return { format: anthropicReasoningFormat, value };
  return { format: mark[1]!, ...(mark[2] ? { id: mark[2] } : {}), value: value.slice(mark[0].length) };
}

/**
 * A thinking or redacted thinking block sent back, as its reasoning entry. A signature or encrypted data is
 * its provider's (Anthropic's unless wrapped with another format) and goes back to that provider alone
 * (`formatFields`); thinking without a signature is reasoning text with no provider of its own.
 */
function reasoningDetail(block: Json): Json {
  if (block.type === "redacted_thinking") {
    const { value, format, ...id } = unwrapReasoning(String(block.data));
    return { type: "reasoning.encrypted", data: value, ...formatFields(format), ...id };
  }
  const { value, format, ...id } = unwrapReasoning(typeof block.signature === "string" ? block.signature : "");
  if (!value) return { type: "reasoning.text", text: block.thinking };
  return { type: "reasoning.text", text: block.thinking, signature: value, ...formatFields(format), ...id };
}

/** A Messages request as the gateway runs it. */
export interface MappedMessages {
  /** A body `chatCompletionRequest` parses: the normalised request every endpoint's translation starts from. */
  chat: Json;
  /**
   * What only Anthropic's own API reads (its versioned tools, file ids, server tool blocks sent back...), by
   * where it is in the body: endpoints of other wire formats cannot carry the request.
   */
  anthropicOnly: string[];
  /** The history carries server tool calls the gateway ran, which only a translation sends on. */
  replayed: boolean;
}

/**
 * A model as the Messages API names it: Anthropic's own names (`claude-sonnet-4-5-20250929`, as Claude Code
 * sends them) are Anthropic's models, which the catalog finds by their upstream name.
 */
const modelName = (model: string): string => (model.includes("/") || model.startsWith("@") ? model : `anthropic/${model}`);

const cacheOf = (block: Json): Json => (block.cache_control ? { cache_control: block.cache_control } : {});

/** The longest function name Chat Completions takes; Anthropic takes tool names of up to 128 characters. */
const chatNameLimit = 64;

/**
 * A tool name as the chat form gives it: a longer one than chat takes is cut, with a hash of the whole that
 * keeps it apart from others. Such a request goes only to Anthropic endpoints, with the name as sent.
 */
const chatName = (name: string): string =>
  name.length <= chatNameLimit ? name : `${name.slice(0, chatNameLimit - 9)}_${createHash("sha256").update(name).digest("hex").slice(0, 8)}`;

/** Maps one request's blocks to chat parts, noting at `where` what only Anthropic reads. */
class Mapper {
  readonly anthropicOnly: string[] = [];
  /** Server tool calls the gateway ran were sent back: only a translation carries them. */
  replayed = false;

  /**
   * Notes what only Anthropic reads. The block stands in the chat form as its JSON text, so that the spend
   * hold counts it and the guardrails' filters read it; that form is then never sent on. A document's
   * stand-in says so (`type: "document"` in `held_as`), so that the hold takes it at the model's context.
   */
  only(where: string, what: string, block: unknown): Json {
    this.anthropicOnly.push(`${where}: ${what}`);
    const type = (block as { type?: unknown }).type;
    return { type: "text", text: JSON.stringify(block), ...(type === "document" ? { held_as: { type } } : {}) };
  }

  /** An image or document source as a URL chat takes: a data URL or the http(s) URL itself; undefined for others. */
  private sourceUrl(source: { type: string; media_type?: string; data?: string; url?: string }): string | undefined {
    if (source.type === "base64") return `data:${source.media_type};base64,${source.data}`;
    if (source.type === "url") return source.url;
    return undefined;
  }

  /** A user block (not a tool result) as chat content parts (a document may take two). */
  part(block: MessagesContentBlock, where: string): Json[] {
    switch (block.type) {
      case "text":
        return [{ type: "text", text: (block as Block<"text">).text, ...cacheOf(block as Block<"text">) }];
      case "image": {
        const image = block as Block<"image">;
        const url = this.sourceUrl(image.source);
        return [url === undefined ? this.only(`${where}.source`, `${image.source.type} sources`, block) : { type: "image_url", image_url: { url }, ...cacheOf(image) }];
      }
      case "document":
        return this.document(block as Block<"document">, where);
      default:
        return [this.only(where, `blocks of type ${block.type} in a user turn`, block)];
    }
  }

  /**
   * A document as chat parts. Its `title` and `context` are text the model reads: a text document's come
   * before its text, in one part; a file keeps its title as its name, its context as a text part before it.
   * So the guardrails' filters read them, and a translation (other endpoints, or Anthropic's once a filter
   * redacted the prompt) carries them.
   */
  private document(document: Block<"document">, where: string): Json[] {
    const { source } = document;
    const title = document.title ?? undefined;
    const context = document.context ? [document.context] : [];
    const asText = (body: string): Json[] => [{ type: "text", text: [...(title ? [title] : []), ...context, body].join("\n\n"), ...cacheOf(document) }];
    if (source.type === "text") return asText(source.data);
    if (source.type === "content") {
      if (typeof source.content === "string") return asText(source.content);
      const texts = source.content.filter((b) => b.type === "text" && typeof b.text === "string").map((b) => b.text as string);
      if (texts.length !== source.content.length) return [this.only(`${where}.source.content`, "blocks other than text", document)];
      return asText(texts.join("\n"));
    }
    const url = this.sourceUrl(source);
    if (url === undefined) return [this.only(`${where}.source`, `${source.type} sources`, document)];
    return [...context.map((text) => ({ type: "text", text })), { type: "file", file: { filename: title ?? "document.pdf", file_data: url }, ...cacheOf(document) }];
  }

  /** A tool result as chat's tool message; an error is said in its text, where chat has no flag for it. */
  toolResult(block: Block<"tool_result">, where: string): Json {
    const content = block.content ?? "";
    const parts: Json[] = [];
    if (typeof content === "string") parts.push({ type: "text", text: content });
    else {
      content.forEach((b, i) => {
        if (b.type === "text" && typeof b.text === "string") parts.push({ type: "text", text: b.text, ...cacheOf(b) });
        else parts.push(this.only(`${where}.content[${i}]`, `blocks of type ${b.type} in a tool result`, b));
      });
    }
    const last = parts.at(-1);
    if (last && block.cache_control) last.cache_control = block.cache_control;
    const error = block.is_error ? "Error: " : "";
    if (parts.every((p) => !p.cache_control)) return { role: "tool", tool_call_id: block.tool_use_id, content: error + parts.map((p) => p.text).join("\n") };
    return { role: "tool", tool_call_id: block.tool_use_id, content: error ? [{ type: "text", text: error }, ...parts] : parts };
  }

  user(content: string | MessagesContentBlock[], where: string): Json[] {
    if (typeof content === "string") return [{ role: "user", content }];
    const out: Json[] = [];
    const parts: Json[] = [];
    content.forEach((block, i) => {
      const at = `${where}.content[${i}]`;
      if (block.type === "tool_result") out.push(this.toolResult(block as Block<"tool_result">, at));
      else parts.push(...this.part(block, at));
    });
    if (parts.length) out.push({ role: "user", content: parts });
    return out;
  }

  /**
   * An assistant turn as chat messages. The server tool calls the gateway ran for it, sent back as its
   * `server_tool_use` blocks and their results (`web_search_tool_result`, `web_fetch_tool_result`,
   * `server_tool_result`), are history: the call the model made and the result it read, then what the turn
   * said after them.
   */
  assistant(content: string | MessagesContentBlock[], where: string): Json[] {
    if (typeof content === "string") return [{ role: "assistant", content }];
    const out: Json[] = [];
    let turn = { parts: [] as Json[], calls: [] as Json[], details: [] as Json[] };
    const flush = () => {
      const { parts, calls, details } = turn;
      if (parts.length || calls.length || details.length) {
        out.push({ role: "assistant", content: parts.length ? parts : null, ...(calls.length ? { tool_calls: calls } : {}), ...(details.length ? { reasoning_details: details } : {}) });
      }
      turn = { parts: [], calls: [], details: [] };
    };
    content.forEach((block, i) => {
      const at = `${where}.content[${i}]`;
      const b = block as Json;
      if (block.type === "text") turn.parts.push({ type: "text", text: b.text, ...cacheOf(b) });
      else if (block.type === "tool_use") turn.calls.push({ id: b.id, type: "function", function: { name: chatName(String(b.name)), arguments: JSON.stringify(b.input ?? {}) } });
      else if (block.type === "thinking" || block.type === "redacted_thinking") turn.details.push(reasoningDetail(b));
      else if (block.type === "server_tool_use" && replayedTool(b.name)) {
        this.replayed = true;
        turn.calls.push({ id: String(b.id), type: "function", function: { name: toolFunctionName(replayedTool(b.name)!), arguments: JSON.stringify(b.input ?? {}) } });
      } else if (resultTypes.has(block.type)) {
        this.replayed = true;
        flush();
        out.push({ role: "tool", tool_call_id: String(b.tool_use_id), content: replayedResult(b) });
      } else turn.parts.push(this.only(at, `blocks of type ${block.type} in an assistant turn`, block));
    });
    flush();
    return out;
  }

  /** A tool as chat declares it: a function, or a server tool of the gateway that does the same work. */
  tool(tool: MessagesTool, where: string): Json | undefined {
    const type = typeof tool.type === "string" ? tool.type : "custom";
    if (type === "custom") {
      const custom = tool as Extract<MessagesTool, { input_schema: unknown }>;
      if (custom.name.length > chatNameLimit) this.only(`${where}.name`, `tool names longer than ${chatNameLimit} characters`, custom.name);
      const fn = { name: chatName(custom.name), ...(custom.description ? { description: custom.description } : {}), parameters: custom.input_schema };
      return { type: "function", function: fn, ...cacheOf(custom) };
    }
    if (type.startsWith("openrouter:")) return tool;
    if (/^web_search_\d+$/.test(type)) return serverTool("openrouter:web_search", tool, where, { max_uses: "max_uses", allowed_domains: "allowed_domains", blocked_domains: "excluded_domains" });
    if (/^web_fetch_\d+$/.test(type)) return serverTool("openrouter:web_fetch", tool, where, { max_uses: "max_uses", max_content_tokens: "max_content_tokens", allowed_domains: "allowed_domains", blocked_domains: "blocked_domains" });
    if (unrelayedTools.test(type)) refuseUnrelayed(where, `tools of type ${type}`);
    this.only(where, `tools of type ${type}`, tool);
    return undefined;
  }
}

/** Anthropic's tools that it runs itself, answering with blocks of its own (code execution, tool search). */
const unrelayedTools = /^(code_execution|tool_search_tool)_/;

function refuseUnrelayed(where: string, what: string): never {
  throw badRequest(`Invalid body: ${where}: ${what} run at Anthropic, which answers with blocks of its own that the gateway does not relay`);
}

/** Fields of an Anthropic tool definition that say what it is rather than how it behaves. */
const toolIdentity = new Set(["type", "name", "cache_control"]);

/** One of Anthropic's server tools as the gateway's own: its settings renamed, what the gateway cannot honour refused. */
function serverTool(type: string, tool: Json, where: string, settings: Record<string, string>): Json {
  const parameters: Json = {};
  for (const [field, value] of Object.entries(tool)) {
    if (toolIdentity.has(field) || value === undefined || value === null) continue;
    const ours = settings[field];
    if (!ours) throw badRequest(`Invalid body: ${where}.${field}: not supported by the gateway's ${type}`);
    parameters[ours] = value;
  }
  return { type, parameters };
}

const effortOf = { low: "low", medium: "medium", high: "high", xhigh: "xhigh", max: "xhigh" } as const;

function reasoning(request: MessagesCountTokensRequest & Partial<MessagesRequest>): Json | undefined {
  const effort = request.output_config?.effort;
  const thinking = request.thinking;
  if (thinking?.type === "enabled") return { max_tokens: thinking.budget_tokens };
  if (thinking?.type === "disabled") return { enabled: false };
  if (thinking?.type === "adaptive" || effort) return { enabled: true, ...(effort ? { effort: effortOf[effort] } : {}) };
  return undefined;
}

function toolChoice(choice: MessagesRequest["tool_choice"]): Json {
  if (!choice) return {};
  const parallel = "disable_parallel_tool_use" in choice && choice.disable_parallel_tool_use ? { parallel_tool_calls: false } : {};
  if (choice.type === "tool") return { tool_choice: { type: "function", function: { name: chatName(choice.name) } }, ...parallel };
  return { tool_choice: choice.type === "any" ? "required" : choice.type, ...parallel };
}

/**
 * The most stop sequences Chat Completions takes, and with it every endpoint but Anthropic's: a request with
 * more goes only to Anthropic endpoints, with the request as sent; the chat form carries the first ones.
 */
export const chatStopLimit = 4;

/** A Messages request (or a count_tokens one) as a chat request, and what in it only Anthropic reads. */
export function toChatRequest(request: MessagesCountTokensRequest & Partial<MessagesRequest>): MappedMessages {
  const mapper = new Mapper();
  const messages: Json[] = [];
  if (typeof request.system === "string") messages.push({ role: "system", content: request.system });
  else if (request.system?.length) messages.push({ role: "system", content: request.system.map((b) => ({ type: "text", text: b.text, ...cacheOf(b) })) });
  // Thinking clearing the gateway applies to the translation itself; other context edits only Anthropic endpoints carry.
  const kept = request.context_management === undefined ? undefined : thinkingTurnsKept(request.context_management);
  (kept === undefined ? request.messages : clearedThinking(request.messages, kept)).forEach((message, i) => {
    const where = `messages[${i}]`;
    if (message.role === "user") messages.push(...mapper.user(message.content, where));
    else if (message.role === "assistant") messages.push(...mapper.assistant(message.content, where));
    else messages.push({ role: "system", content: typeof message.content === "string" ? message.content : message.content.map((b) => ({ type: "text", text: b.text, ...cacheOf(b) })) });
  });
  const tools = (request.tools ?? []).map((tool, i) => mapper.tool(tool, `tools[${i}]`)).filter((t): t is Json => t !== undefined);
  for (const field of unrelayedFields) if (request[field] !== undefined) refuseUnrelayed(field, "its tools");
  for (const field of anthropicOnlyFields) {
    if (request[field] === undefined || (field === "context_management" && kept !== undefined)) continue;
    mapper.only(field, "Anthropic's own setting", request[field]);
  }
  const stops = request.stop_sequences ?? [];
  if (stops.length > chatStopLimit) mapper.anthropicOnly.push(`stop_sequences: ${stops.length} given; endpoints other than Anthropic's take at most ${chatStopLimit}`);
  const effort = reasoning(request);
  const chat: Json = {
    model: modelName(request.model),
    messages,
    ...(request.models ? { models: request.models.map(modelName) } : {}),
    ...(request.provider ? { provider: request.provider } : {}),
    ...(request.max_tokens !== undefined ? { max_tokens: request.max_tokens } : {}),
    ...(stops.length ? { stop: stops.slice(0, chatStopLimit) } : {}),
    ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
    ...(request.top_p !== undefined ? { top_p: request.top_p } : {}),
    ...(request.top_k !== undefined ? { top_k: request.top_k } : {}),
    ...(effort ? { reasoning: effort } : {}),
    ...(request.output_config?.format ? { response_format: { type: "json_schema", json_schema: { name: "output", schema: request.output_config.format.schema, strict: true } } } : {}),
    ...(tools.length ? { tools } : {}),
    ...(tools.length ? toolChoice(request.tool_choice) : {}),
    ...(request.metadata?.user_id ? { user: request.metadata.user_id } : request.user ? { user: request.user } : {}),
    ...(request.stream ? { stream: true } : {}),
    ...(request.service_tier ? { service_tier: request.service_tier === "standard_only" ? "default" : "auto" } : {}),
    ...(request.cache_control ? { cache_control: request.cache_control } : {}),
    ...(request.session_id !== undefined ? { session_id: request.session_id } : {}),
    ...(request.trace ? { trace: request.trace } : {}),
    ...(request.plugins ? { plugins: request.plugins } : {}),
  };
  return { chat, anthropicOnly: mapper.anthropicOnly, replayed: mapper.replayed };
}
