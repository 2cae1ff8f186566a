import { UpstreamError } from "./types.js";
import { isObject, text } from "../json.js";

/**
 * Chat Completions requests in OpenAI's Responses format (`POST /responses`): messages become input items
 * in their order, tool calls and results become `function_call` and `function_call_output` items, and the
 * reasoning of earlier turns goes back as encrypted reasoning items. Requests are stateless (`store:
 * false`), so everything a later turn needs travels in the request itself.
 */
type Json = Record<string, unknown>;

/** The `format` of the reasoning entries this wire format produces and reads back. */
export const responsesReasoningFormat = "openai-responses-v1";

/** The objects of an array value; none for anything else. */
const objects = (value: unknown): Json[] => (Array.isArray(value) ? value.filter(isObject) : []);
/** Whether a value is a finite number. */
const isNumber = (value: unknown): value is number => typeof value === "number" && Number.isFinite(value);

/** Refuses a request this wire format cannot express, as the provider would. */
function refuse(message: string): never {
  throw new UpstreamError(`openai: ${message}`, 400, false);
}

/** The prompt-cache breakpoint a part carries, kept on the Responses part. */
const breakpointOf = (part: Json): Json => (isObject(part.prompt_cache_breakpoint) ? { prompt_cache_breakpoint: part.prompt_cache_breakpoint } : {});

/** A Chat Completions `file` part as an `input_file` part: a URL, a data URL or an uploaded file's id. */
function inputFile(file: Json, extra: Json): Json {
  const data = text(file.file_data);
  const out: Json = { type: "input_file", ...extra };
  if (typeof file.file_id === "string" && file.file_id) out.file_id = file.file_id;
  if (/^https?:\/\//.test(data)) out.file_url = data;
  else if (data) out.file_data = data;
  if (typeof file.filename === "string" && file.filename) out.filename = file.filename;
  if (!out.file_id && !out.file_url && !out.file_data) refuse("files must carry file_data or file_id");
  return out;
}

/** One content part of a user, system, developer or tool message as a Responses input part. */
function inputPart(part: Json): Json {
  const extra = breakpointOf(part);
  if (part.type === "text") return { type: "input_text", text: text(part.text), ...extra };
  if (part.type === "image_url" && isObject(part.image_url)) {
    return { type: "input_image", image_url: text(part.image_url.url), detail: text(part.image_url.detail) || "auto", ...extra };
  }
  // An image given by file id is a file part marked with the image's detail.
  if (part.type === "file" && isObject(part.file) && typeof part.image_detail === "string" && text(part.file.file_id)) {
    return { type: "input_image", file_id: text(part.file.file_id), detail: part.image_detail, ...extra };
  }
  if (part.type === "file" && isObject(part.file)) return inputFile(part.file, extra);
  return refuse(`content of type ${String(part.type)} cannot be sent to the Responses API`);
}

/** A message's content as input parts; a plain string is one text part. */
function inputParts(content: unknown): Json[] {
  if (typeof content === "string") return content ? [{ type: "input_text", text: content }] : [];
  return objects(content).map(inputPart);
}

/** An assistant message's words as output parts: its text, and a refusal when it declined. */
function outputParts(message: Json): Json[] {
  const parts: Json[] = [];
  if (typeof message.content === "string" && message.content) parts.push({ type: "output_text", text: message.content });
  for (const part of objects(message.content)) {
    if (part.type === "text" && text(part.text)) parts.push({ type: "output_text", text: text(part.text) });
    else if (part.type === "refusal" && text(part.refusal)) parts.push({ type: "refusal", refusal: text(part.refusal) });
  }
  if (text(message.refusal)) parts.push({ type: "refusal", refusal: text(message.refusal) });
  return parts;
}

interface ReasoningGroup {
  id: string | undefined;
  summary: Json[];
  encrypted: string | undefined;
}

/** An assistant turn's Responses reasoning as reasoning items, one per item id, its summaries then its encrypted content. */
function reasoningItems(details: unknown): Json[] {
  const groups: ReasoningGroup[] = [];
  let current: ReasoningGroup | undefined;
  for (const d of objects(details)) {
    if (d.format !== responsesReasoningFormat) continue;
    if (d.type !== "reasoning.summary" && d.type !== "reasoning.encrypted") continue;
    const id = typeof d.id === "string" ? d.id : undefined;
    if (!current || current.id !== id || current.encrypted !== undefined) {
      current = { id, summary: [], encrypted: undefined };
      groups.push(current);
    }
    if (d.type === "reasoning.summary") current.summary.push({ type: "summary_text", text: text(d.summary) });
    else current.encrypted = text(d.data);
  }
  // With nothing stored upstream, an item without its encrypted content could not be resolved: it stays out.
  return groups
    .filter((g) => g.encrypted)
    .map((g) => ({ type: "reasoning", ...(g.id ? { id: g.id } : {}), summary: g.summary, encrypted_content: g.encrypted }));
}

/** An assistant message as items: its reasoning, its words, then its tool calls, as the provider answered them. */
function assistantItems(message: Json): Json[] {
  const items = reasoningItems(message.reasoning_details);
  const content = outputParts(message);
  if (content.length) items.push({ type: "message", role: "assistant", content });
  for (const call of objects(message.tool_calls)) {
    const fn = isObject(call.function) ? call.function : {};
    items.push({ type: "function_call", call_id: text(call.id), name: text(fn.name), arguments: text(fn.arguments) || "{}" });
  }
  return items;
}

/** A tool message's content as a call's output: text as one string, anything richer as input parts. */
function toolOutput(content: unknown): string | Json[] {
  if (typeof content === "string") return content;
  const parts = objects(content);
  if (parts.every((p) => p.type === "text")) return parts.map((p) => text(p.text)).join("");
  return parts.map(inputPart);
}

/** The conversation as input items, in order; system and developer messages keep their role and their place. */
function inputItems(messages: unknown): Json[] {
  const items: Json[] = [];
  for (const m of objects(messages)) {
    if (m.role === "system" || m.role === "developer" || m.role === "user") {
      const content = inputParts(m.content);
      if (content.length) items.push({ type: "message", role: m.role, content });
    } else if (m.role === "assistant") items.push(...assistantItems(m));
    else if (m.role === "tool") items.push({ type: "function_call_output", call_id: text(m.tool_call_id), output: toolOutput(m.content) });
  }
  return items;
}

/**
 * Function tools, flattened. `strict` goes when the tool says it; a tool that leaves it out leaves it out
 * here too, and the Responses API applies its own default (strict when the schema allows it).
 */
function functionTools(tools: unknown): Json[] {
  return objects(tools)
    .filter((t) => t.type === "function" && isObject(t.function))
    .map((t) => {
      const fn = t.function as Json;
      return {
        type: "function",
        name: text(fn.name),
        ...(typeof fn.description === "string" ? { description: fn.description } : {}),
        parameters: isObject(fn.parameters) ? fn.parameters : { type: "object", properties: {} },
        ...(typeof fn.strict === "boolean" ? { strict: fn.strict } : {}),
      };
    });
}

/** A Chat Completions `tool_choice` in the Responses form; undefined leaves the provider's default. */
function toolChoice(choice: unknown): unknown {
  if (choice === "none" || choice === "auto" || choice === "required") return choice;
  if (!isObject(choice)) return undefined;
  if (choice.type === "function" && isObject(choice.function)) return { type: "function", name: text(choice.function.name) };
  if (choice.type === "allowed_tools" && isObject(choice.allowed_tools)) {
    const allowed = choice.allowed_tools;
    const tools = objects(allowed.tools).map((t) => (isObject(t.function) ? { type: "function", name: text(t.function.name) } : t));
    return { type: "allowed_tools", mode: allowed.mode === "required" ? "required" : "auto", tools };
  }
  return undefined;
}

/**
 * `response_format` as the Responses `text.format`: a JSON schema's name, schema and strictness move up a
 * level. JSON mode's own schema (`json_object` with `schema`, as Fireworks and Together take it), which
 * `json_object` has no place for here, binds as a JSON schema that is not strict.
 */
function textFormat(format: unknown): Json | undefined {
  if (!isObject(format)) return undefined;
  if (format.type === "json_object" && isObject(format.schema)) return { type: "json_schema", name: "response", schema: format.schema, strict: false };
  if (format.type === "text" || format.type === "json_object") return { type: format.type };
  if (format.type !== "json_schema" || !isObject(format.json_schema)) return undefined;
  const schema = format.json_schema;
  return {
    type: "json_schema",
    name: text(schema.name),
    ...(typeof schema.description === "string" ? { description: schema.description } : {}),
    schema: isObject(schema.schema) ? schema.schema : { type: "object" },
    strict: schema.strict === true,
  };
}

/** The `text` options: the output format and the verbosity, when either is asked for. */
function textOptions(body: Json): Json | undefined {
  const format = textFormat(body.response_format);
  const verbosity = text(body.verbosity);
  if (!format && !verbosity) return undefined;
  return { ...(format ? { format } : {}), ...(verbosity ? { verbosity } : {}) };
}

/** Whether the request asks for encrypted reasoning in its `include`. */
const includesEncrypted = (body: Json): boolean => Array.isArray(body.include) && body.include.includes("reasoning.encrypted_content");

/** The reasoning options, and whether to ask for the encrypted reasoning a later turn must carry. */
function reasoningOptions(body: Json, replaysReasoning: boolean): { reasoning?: Json; encrypted: boolean } {
  const config = isObject(body.reasoning) ? body.reasoning : {};
  const effort = text(body.reasoning_effort) || text(config.effort);
  const summary = text(config.summary);
  if (effort === "none") return { reasoning: { effort }, encrypted: false };
  // Reasoning is on when asked for in one form or another, or when earlier reasoning comes back (a reasoning model).
  const asked = effort !== "" || config.enabled === true || (isNumber(config.max_tokens) && config.max_tokens > 0) || summary !== "";
  if (config.enabled === false && !effort) return { encrypted: false };
  if (!asked && !replaysReasoning) return { encrypted: false };
  // A summary is what the caller reads of the reasoning; a caller hiding reasoning needs none.
  const hidden = config.exclude === true;
  return {
    reasoning: { ...(effort ? { effort } : {}), ...(hidden ? {} : { summary: summary || "auto" }) },
    encrypted: true,
  };
}

/**
 * Sampling and bookkeeping fields the Responses API takes as Chat Completions does. The end user's id goes as
 * `safety_identifier`, `user`'s successor; when the request has both, each keeps its own.
 */
function carriedFields(body: Json): Json {
  const out: Json = {};
  if (isNumber(body.temperature)) out.temperature = body.temperature;
  if (isNumber(body.top_p)) out.top_p = body.top_p;
  if (typeof body.parallel_tool_calls === "boolean") out.parallel_tool_calls = body.parallel_tool_calls;
  const user = text(body.user);
  const safety = text(body.safety_identifier);
  if (safety || user) out.safety_identifier = safety || user;
  if (safety && user && user !== safety) out.user = user;
  if (typeof body.prompt_cache_key === "string" && body.prompt_cache_key) out.prompt_cache_key = body.prompt_cache_key;
  if (typeof body.service_tier === "string" && body.service_tier) out.service_tier = body.service_tier;
  if (isObject(body.metadata)) out.metadata = body.metadata;
  if (isObject(body.client_metadata)) out.client_metadata = body.client_metadata;
  if (isObject(body.prompt_cache_options) && body.prompt_cache_options.mode === "explicit") out.prompt_cache_options = { mode: "explicit" };
  return out;
}

/** The Responses request for a chat-shaped upstream body. */
export function responsesBody(body: Record<string, unknown>, upstreamModel: string, stream: boolean): Record<string, unknown> {
  const input = inputItems(body.messages);
  if (input.length === 0) refuse("a request needs at least one message with content");
  const tools = functionTools(body.tools);
  const choice = tools.length ? toolChoice(body.tool_choice) : undefined;
  const textConfig = textOptions(body);
  const maxTokens = body.max_completion_tokens ?? body.max_tokens;
  const think = reasoningOptions(body, input.some((item) => item.type === "reasoning"));
  return {
    model: upstreamModel,
    input,
    store: false,
    stream,
    ...(tools.length ? { tools } : {}),
    ...(choice !== undefined ? { tool_choice: choice } : {}),
    ...(textConfig ? { text: textConfig } : {}),
    ...(isNumber(maxTokens) ? { max_output_tokens: maxTokens } : {}),
    ...(think.reasoning ? { reasoning: think.reasoning } : {}),
    ...(think.encrypted || includesEncrypted(body) ? { include: ["reasoning.encrypted_content"] } : {}),
    ...carriedFields(body),
  };
}

/** Whether a value is a number other than 0. */
const nonZero = (value: unknown) => isNumber(value) && value !== 0;

/** Chat Completions fields the Responses API has no place for, each with the test of a value that asks for something. */
const uncarried: ReadonlyArray<readonly [string, (value: unknown) => boolean]> = [
  ["stop", (v) => (typeof v === "string" && v !== "") || (Array.isArray(v) && v.length > 0)],
  ["n", (v) => isNumber(v) && v > 1],
  ["logprobs", (v) => v === true],
  ["top_logprobs", (v) => isNumber(v) && v > 0],
  ["seed", isNumber],
  ["frequency_penalty", nonZero],
  ["presence_penalty", nonZero],
  ["logit_bias", (v) => isObject(v) && Object.keys(v).length > 0],
  ["top_k", (v) => isNumber(v) && v > 0],
  ["top_a", nonZero],
  ["min_p", nonZero],
  ["repetition_penalty", (v) => isNumber(v) && v !== 1],
  ["prediction", isObject],
  ["audio", isObject],
  ["modalities", (v) => Array.isArray(v) && v.some((m) => m !== "text")],
  ["response_format", (v) => isObject(v) && v.type !== "text" && v.type !== "json_object" && v.type !== "json_schema"],
];

/** Content part types no Responses input part can hold. */
const uncarriedParts = new Set(["input_audio", "video_url", "input_video"]);

/** The fields of a chat-shaped body a Responses upstream cannot carry, then the content part types it has no part for. */
export function responsesCannotCarry(body: Record<string, unknown>): string[] {
  const names = uncarried.filter(([name, asks]) => body[name] !== undefined && body[name] !== null && asks(body[name])).map(([name]) => name);
  const parts = new Set<string>();
  for (const m of objects(body.messages)) {
    for (const part of objects(m.content)) if (typeof part.type === "string" && uncarriedParts.has(part.type)) parts.add(part.type);
  }
  return [...names, ...parts];
}
