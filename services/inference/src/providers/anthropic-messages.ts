import { UpstreamError } from "./types.js";
import { isObject, objectOf, text } from "../json.js";
import { asks } from "../parameters.js";
import { functionTools, plainToolChoice } from "./chat-parts.js";
import { choicesAsked, outputLimit } from "../request-body.js";

/**
 * Chat Completions requests in Anthropic's Messages format: system prompt apart, tool calls and results as
 * content blocks, images and PDFs as sources, prompt-cache markers where the caller put them, thinking
 * from the reasoning options.
 */
type Json = Record<string, unknown>;
type Block = Json & { type: string };
interface Message {
  role: "user" | "assistant";
  content: Block[];
}

const defaultMaxTokens = 4096;
const maxCacheBreakpoints = 4;

/** Share of the output budget given to thinking at each effort, as OpenRouter documents it. */
const effortShare: Record<string, number> = { max: 0.95, xhigh: 0.95, high: 0.8, medium: 0.5, low: 0.2, minimal: 0.1 };

/** Chat Completions parameters the Messages API has no field for. */
const uncarried = [
  "prediction",
  "modalities",
  "response_format",
  "seed",
  "logprobs",
  "top_logprobs",
  "frequency_penalty",
  "presence_penalty",
  "logit_bias",
  "min_p",
  "top_a",
  "repetition_penalty",
] as const;

/** Anthropic's temperature scale ends at 1, where OpenAI's ends at 2. */
const highestTemperature = 1;

function refuse(message: string): never {
  throw new UpstreamError(`anthropic: ${message}`, 400, false);
}

/** `data:<type>;base64,<data>` or a URL, as Anthropic's base64 or url source. */
function source(url: string): Json {
  const data = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  if (data) return { type: "base64", media_type: data[1], data: data[2] };
  if (/^https?:\/\//.test(url)) return { type: "url", url };
  return refuse("images and files must be https URLs or base64 data URLs");
}

/** One OpenAI content part as an Anthropic block; the prompt-cache marks come along. */
function block(part: Json, explicitCaching: boolean, ttl: string | undefined): Block {
  let out: Block;
  if (part.type === "text") out = { type: "text", text: text(part.text) };
  else if (part.type === "image_url" && isObject(part.image_url)) out = { type: "image", source: source(text(part.image_url.url)) };
  else if (part.type === "file" && isObject(part.file)) {
    const data = text(part.file.file_data);
    if (!data) refuse("files must carry file_data");
    out = { type: "document", source: source(data), ...(part.file.filename ? { title: part.file.filename } : {}) };
  } else refuse(`content of type ${String(part.type)} is not supported`);
  if (isObject(part.cache_control)) out.cache_control = part.cache_control;
  else if (explicitCaching && part.prompt_cache_breakpoint) out.cache_control = { type: "ephemeral", ...(ttl ? { ttl } : {}) };
  return out;
}

function blocks(content: unknown, explicitCaching: boolean, ttl: string | undefined): Block[] {
  if (typeof content === "string") return content ? [{ type: "text", text: content }] : [];
  if (!Array.isArray(content)) return [];
  return content.filter(isObject).map((part) => block(part, explicitCaching, ttl));
}

/** The `format` of Anthropic's own reasoning entries. */
const reasoningFormat = "anthropic-claude-v1";

/**
 * Reasoning the caller sends back (needed with tool use while thinking) as thinking blocks. Only Anthropic's
 * own entries become blocks: another provider's signature or encrypted reasoning means nothing here.
 */
function thinkingBlocks(details: unknown): Block[] {
  if (!Array.isArray(details)) return [];
  return details.filter(isObject).flatMap((d): Block[] => {
    if (d.format !== reasoningFormat) return [];
    if (d.type === "reasoning.text" && typeof d.signature === "string") return [{ type: "thinking", thinking: text(d.text), signature: d.signature }];
    if (d.type === "reasoning.encrypted" && typeof d.data === "string") return [{ type: "redacted_thinking", data: d.data }];
    return [];
  });
}

function assistantBlocks(message: Json, explicitCaching: boolean, ttl: string | undefined): Block[] {
  const out = [...thinkingBlocks(message.reasoning_details), ...blocks(message.content, explicitCaching, ttl)];
  for (const call of Array.isArray(message.tool_calls) ? message.tool_calls.filter(isObject) : []) {
    const fn = isObject(call.function) ? call.function : {};
    out.push({ type: "tool_use", id: text(call.id), name: text(fn.name), input: objectOf(text(fn.arguments)) });
  }
  return out;
}

/** Anthropic wants user and assistant turns alternating: neighbours of one role become one turn. */
function append(messages: Message[], role: Message["role"], content: Block[]): void {
  if (content.length === 0) return;
  const last = messages.at(-1);
  if (last?.role === role) last.content.push(...content);
  else messages.push({ role, content });
}

/** The top-level marker caches everything up to the last block that can carry one. */
function markLast(system: Block[], messages: Message[], marker: Json): void {
  const last = messages.at(-1)?.content.at(-1) ?? system.at(-1);
  if (last && !("cache_control" in last) && last.type !== "thinking" && last.type !== "redacted_thinking") last.cache_control = marker;
}

/** Anthropic accepts four cache breakpoints; the latest ones cover the most, so earlier extras go. */
function limitBreakpoints(tools: Json[], system: Block[], messages: Message[]): void {
  const marked = [...tools, ...system, ...messages.flatMap((m) => m.content)].filter((b) => "cache_control" in b);
  for (const b of marked.slice(0, Math.max(0, marked.length - maxCacheBreakpoints))) delete b.cache_control;
}

/** Anthropic's least thinking budget; a budget must also stay below the request's `max_tokens`. */
const leastThinkingBudget = 1024;

/**
 * Thinking from the reasoning options: none for `enabled: false`, effort `none` or a budget of 0; else the
 * budget asked (`reasoning.max_tokens`) or the effort's share of `max_tokens`, raised to Anthropic's least.
 * A budget Anthropic cannot take is refused before it is called, saying what it requires.
 */
/** Whether a request asks for thinking: an effort other than none, a budget other than 0, or `enabled`. */
function thinks(body: Json): boolean {
  const reasoning = isObject(body.reasoning) ? body.reasoning : {};
  const effort = text(body.reasoning_effort) || text(reasoning.effort);
  if (effort === "none" || reasoning.enabled === false || reasoning.max_tokens === 0) return false;
  return typeof reasoning.max_tokens === "number" || effort !== "" || reasoning.enabled === true;
}

function thinking(body: Json, maxTokens: number): Json | undefined {
  if (!thinks(body)) return undefined;
  const reasoning = isObject(body.reasoning) ? body.reasoning : {};
  const effort = text(body.reasoning_effort) || text(reasoning.effort);
  const asked = typeof reasoning.max_tokens === "number" ? reasoning.max_tokens : undefined;
  if (asked !== undefined && asked < leastThinkingBudget) {
    refuse(`reasoning.max_tokens must be 0 (no thinking) or at least ${leastThinkingBudget}: Anthropic's thinking budget is at least ${leastThinkingBudget} tokens`);
  }
  if (asked === undefined && maxTokens <= leastThinkingBudget) {
    refuse(`thinking needs max_tokens above ${leastThinkingBudget} (${maxTokens} given): Anthropic's thinking budget is at least ${leastThinkingBudget} tokens and below max_tokens; raise max_tokens or turn reasoning off`);
  }
  const budget = asked ?? Math.max(leastThinkingBudget, Math.floor(maxTokens * (effortShare[effort] ?? 0.5)));
  if (budget >= maxTokens) refuse(`reasoning.max_tokens (${budget}) must be below max_tokens (${maxTokens}): Anthropic's thinking budget is part of the output`);
  return { type: "enabled", budget_tokens: budget };
}

function toolChoice(choice: unknown, parallel: unknown): Json | undefined {
  let out: Json | undefined;
  if (choice === "auto") out = { type: "auto" };
  else if (choice === "none") out = { type: "none" };
  else if (choice === "required") out = { type: "any" };
  else if (isObject(choice) && isObject(choice.function)) out = { type: "tool", name: text(choice.function.name) };
  // ToolChoiceNone has no `disable_parallel_tool_use`: with no tool call there is nothing to run in parallel.
  if (parallel === false && out?.type !== "none") out = { ...(out ?? { type: "auto" }), disable_parallel_tool_use: true };
  return out;
}

export function messagesRequest(body: Json, upstreamModel: string, endpointMaxTokens: number | null): Json {
  const options = isObject(body.prompt_cache_options) ? body.prompt_cache_options : undefined;
  const explicitCaching = options?.mode === "explicit";
  const ttl = options && (options.ttl === "5m" || options.ttl === "1h") ? options.ttl : undefined;
  const system: Block[] = [];
  const messages: Message[] = [];
  for (const m of Array.isArray(body.messages) ? body.messages.filter(isObject) : []) {
    if (m.role === "system" || m.role === "developer") system.push(...blocks(m.content, explicitCaching, ttl));
    else if (m.role === "user") append(messages, "user", blocks(m.content, explicitCaching, ttl));
    else if (m.role === "assistant") append(messages, "assistant", assistantBlocks(m, explicitCaching, ttl));
    else if (m.role === "tool") {
      const content = blocks(m.content, explicitCaching, ttl);
      append(messages, "user", [{ type: "tool_result", tool_use_id: text(m.tool_call_id), content: content.length ? content : "" }]);
    }
  }
  if (messages.length === 0) refuse("a request needs at least one user or assistant message");

  // The Messages API has no `allowed_tools` choice: only the functions it allows are declared.
  const tools = functionTools(body).map((t) => {
    const fn = t.function as Json;
    return {
      name: text(fn.name),
      ...(fn.description ? { description: fn.description } : {}),
      input_schema: isObject(fn.parameters) ? fn.parameters : { type: "object", properties: {} },
      ...(isObject(t.cache_control) ? { cache_control: t.cache_control } : {}),
    };
  });
  if (isObject(body.cache_control) && !explicitCaching) markLast(system, messages, body.cache_control);
  limitBreakpoints(tools, system, messages);

  // The limit the spend hold covers, at most the endpoint's; Anthropic requires one.
  const maxTokens = outputLimit(body, endpointMaxTokens) ?? endpointMaxTokens ?? defaultMaxTokens;
  const think = thinking(body, maxTokens);
  const stop = typeof body.stop === "string" ? [body.stop] : Array.isArray(body.stop) ? body.stop : undefined;
  const choice = tools.length ? toolChoice(plainToolChoice(body.tool_choice), body.parallel_tool_calls) : undefined;
  const tier = body.service_tier === "default" ? "standard_only" : body.service_tier === "auto" || body.service_tier === "priority" ? "auto" : undefined;
  const request: Json = {
    model: upstreamModel,
    max_tokens: maxTokens,
    messages,
    ...(system.length ? { system } : {}),
    ...(tools.length ? { tools } : {}),
    ...(choice ? { tool_choice: choice } : {}),
    ...(stop?.length ? { stop_sequences: stop } : {}),
    ...(think ? { thinking: think } : {}),
    ...(typeof body.user === "string" ? { metadata: { user_id: body.user } } : {}),
    ...(tier ? { service_tier: tier } : {}),
  };
  const unsent = unsentSampling(body);
  for (const name of sampling) if (typeof body[name] === "number" && !unsent.includes(name)) request[name] = body[name];
  return request;
}

const sampling = ["temperature", "top_p", "top_k"] as const;

/**
 * Thinking fixes the sampling: Anthropic refuses temperature, top_p and top_k beside it. A temperature above
 * its highest it cannot take either; left out, the model samples at its default, which is 1.
 */
function unsentSampling(body: Json): string[] {
  const given = sampling.filter((name) => typeof body[name] === "number");
  return thinks(body) ? given : given.filter((name) => name === "temperature" && (body.temperature as number) > highestTemperature);
}

/**
 * What a chat request asks for that its Messages request leaves out (see `ChatProvider.leftOut`): `n` above 1
 * among them, as the Messages API answers with one choice.
 */
export const messagesLeftOut = (body: Json): string[] => [
  ...unsentSampling(body),
  ...uncarried.filter((name) => asks(body, name)),
  ...(choicesAsked(body) > 1 ? ["n"] : []),
];
