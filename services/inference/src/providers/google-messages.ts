import { parsedWithinDepth } from "@switchyard/runtime";
import { UpstreamError } from "./types.js";
import { isObject, text } from "../json.js";
import { asks } from "../parameters.js";
import { functionTools, plainToolChoice } from "./chat-parts.js";

/**
 * Chat Completions requests in Gemini's generateContent format: system prompt apart, `model` for the
 * assistant, tool calls and results as functionCall / functionResponse parts, images inline or by URI,
 * sampling and thinking options in generationConfig. Fields Gemini has no use for are not sent.
 */
type Json = Record<string, unknown>;
interface Content {
  role: "user" | "model";
  parts: Json[];
}

/** The `format` of reasoning details that carry Gemini's thought signatures. */
export const signatureFormat = "google-gemini-v1";

/**
 * Thinking budgets in tokens per effort. A budget works on every thinking model (2.5 and later), where
 * thinkingLevel is refused by 2.5; 24576 is the largest budget 2.5 Flash accepts.
 */
const effortBudget: Record<string, number> = { none: 0, minimal: 512, low: 1024, medium: 8192, high: 24576, xhigh: 24576, max: 24576 };

const mimeByExtension: Record<string, string> = {
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  heic: "image/heic",
  heif: "image/heif",
  pdf: "application/pdf",
};

/** Chat Completions parameters generateContent has no field for. */
const uncarried = ["prediction", "logit_bias", "parallel_tool_calls", "min_p", "top_a", "repetition_penalty"] as const;

/** What a chat request asks for that its generateContent request leaves out (see `ChatProvider.leftOut`). */
export const generateContentLeftOut = (body: Record<string, unknown>): string[] => uncarried.filter((name) => asks(body, name));

const number = (value: unknown): number | undefined => (typeof value === "number" ? value : undefined);

function refuse(message: string): never {
  throw new UpstreamError(`google: ${message}`, 400, false);
}

/**
 * The value JSON text holds; undefined when it is no JSON, or nests deeper than a request's input may (a
 * tool's result, which no request check reads as JSON): that deep a value would overflow the stack of what
 * writes the provider's request, so the text goes as it is.
 */
const parseJson = (value: string): unknown => parsedWithinDepth(value)?.value;

/** `data:<mime>;base64,<data>` inline; anything else by URI, its type guessed from the extension. */
function media(url: string): Json {
  const data = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  if (data) return { inlineData: { mimeType: data[1], data: data[2] } };
  const extension = /\.([a-z0-9]+)(?:[?#].*)?$/i.exec(url)?.[1]?.toLowerCase() ?? "";
  return { fileData: { mimeType: mimeByExtension[extension] ?? "image/jpeg", fileUri: url } };
}

function part(p: Json): Json | undefined {
  if (p.type === "text") return text(p.text) ? { text: text(p.text) } : undefined;
  if (p.type === "image_url" && isObject(p.image_url)) return media(text(p.image_url.url));
  if (p.type === "file" && isObject(p.file) && text(p.file.file_data)) return media(text(p.file.file_data));
  if (p.type === "input_audio" && isObject(p.input_audio)) return { inlineData: { mimeType: `audio/${text(p.input_audio.format) || "wav"}`, data: text(p.input_audio.data) } };
  return refuse(`content of type ${String(p.type)} is not supported`);
}

function parts(content: unknown): Json[] {
  if (typeof content === "string") return content ? [{ text: content }] : [];
  if (!Array.isArray(content)) return [];
  return (content as unknown[]).filter(isObject).flatMap((p): Json[] => {
    const out = part(p);
    return out ? [out] : [];
  });
}

const plainText = (content: unknown): string =>
  typeof content === "string" ? content : Array.isArray(content) ? content.filter(isObject).map((p) => text(p.text)).join("") : "";

/** Signatures a previous Gemini answer attached to its tool calls, by tool call id. */
function signatures(details: unknown): Map<string, string> {
  const out = new Map<string, string>();
  for (const d of Array.isArray(details) ? details.filter(isObject) : []) {
    if (d.type === "reasoning.encrypted" && d.format === signatureFormat && text(d.id) && text(d.data)) out.set(text(d.id), text(d.data));
  }
  return out;
}

function modelParts(message: Json, toolNames: Map<string, string>): Json[] {
  const out = parts(message.content);
  const signed = signatures(message.reasoning_details);
  for (const call of Array.isArray(message.tool_calls) ? message.tool_calls.filter(isObject) : []) {
    const fn = isObject(call.function) ? call.function : {};
    const args = parseJson(text(fn.arguments) || "{}");
    toolNames.set(text(call.id), text(fn.name));
    const signature = signed.get(text(call.id));
    out.push({ functionCall: { name: text(fn.name), args: isObject(args) ? args : {} }, ...(signature ? { thoughtSignature: signature } : {}) });
  }
  return out;
}

function functionResponse(message: Json, toolNames: Map<string, string>): Json {
  const content = plainText(message.content);
  const parsed = parseJson(content);
  const name = toolNames.get(text(message.tool_call_id)) ?? text(message.name);
  return { functionResponse: { name, response: isObject(parsed) ? parsed : { content } } };
}

function contents(messages: Json[]): { system: string[]; contents: Content[] } {
  const system: string[] = [];
  const out: Content[] = [];
  const toolNames = new Map<string, string>();
  for (const m of messages) {
    if (m.role === "system" || m.role === "developer") {
      const value = plainText(m.content);
      if (value) system.push(value);
    } else if (m.role === "user" || m.role === "assistant") {
      const p = m.role === "user" ? parts(m.content) : modelParts(m, toolNames);
      if (p.length) out.push({ role: m.role === "user" ? "user" : "model", parts: p });
    } else if (m.role === "tool") {
      const response = functionResponse(m, toolNames);
      const last = out.at(-1);
      // Results of one turn's parallel calls go back together, in one user turn.
      if (last?.role === "user" && last.parts.every((p) => "functionResponse" in p)) last.parts.push(response);
      else out.push({ role: "user", parts: [response] });
    }
  }
  return { system, contents: out };
}

function thinkingConfig(body: Json): Json | undefined {
  const reasoning = isObject(body.reasoning) ? body.reasoning : undefined;
  const effort = text(body.reasoning_effort) || text(reasoning?.effort);
  if (!reasoning && !effort) return undefined;
  let budget: number | undefined;
  if (typeof reasoning?.max_tokens === "number") budget = reasoning.max_tokens;
  else if (effort) budget = effortBudget[effort] ?? -1;
  else if (reasoning?.enabled === false) budget = 0;
  const includeThoughts = reasoning?.exclude !== true && budget !== 0;
  const config = { ...(budget !== undefined ? { thinkingBudget: budget } : {}), ...(includeThoughts ? { includeThoughts: true } : {}) };
  return Object.keys(config).length ? config : undefined;
}

function responseFormat(format: unknown): Json {
  if (!isObject(format)) return {};
  if (format.type !== "json_object" && format.type !== "json_schema") return {};
  // JSON mode's own schema (`json_object` with `schema`, as Fireworks and Together take it) binds as one does.
  const schema = format.type === "json_object" ? format.schema : isObject(format.json_schema) ? format.json_schema.schema : undefined;
  return { responseMimeType: "application/json", ...(isObject(schema) ? { responseJsonSchema: schema } : {}) };
}

function toolConfig(choice: unknown): Json | undefined {
  if (choice === "auto") return { functionCallingConfig: { mode: "AUTO" } };
  if (choice === "none") return { functionCallingConfig: { mode: "NONE" } };
  if (choice === "required") return { functionCallingConfig: { mode: "ANY" } };
  if (isObject(choice) && isObject(choice.function)) return { functionCallingConfig: { mode: "ANY", allowedFunctionNames: [text(choice.function.name)] } };
  return undefined;
}

/** `image_config` of an image model (OpenRouter's `aspect_ratio`, `image_size`) as Gemini's imageConfig. */
function imageConfig(value: unknown): Json | undefined {
  if (!isObject(value)) return undefined;
  const config: Json = {};
  if (typeof value.aspect_ratio === "string") config.aspectRatio = value.aspect_ratio;
  if (typeof value.image_size === "string") config.imageSize = value.image_size;
  return Object.keys(config).length ? config : undefined;
}

export function generateContentRequest(body: Json): Json {
  const { system, contents: turns } = contents(Array.isArray(body.messages) ? body.messages.filter(isObject) : []);
  if (turns.length === 0) refuse("a request needs at least one user or assistant message");

  // Gemini has no `allowed_tools` choice: only the functions it allows are declared.
  const declarations = functionTools(body).map((t) => {
    const fn = t.function as Json;
    return { name: text(fn.name), ...(fn.description ? { description: fn.description } : {}), ...(isObject(fn.parameters) ? { parameters: fn.parameters } : {}) };
  });
  const stop = typeof body.stop === "string" ? [body.stop] : Array.isArray(body.stop) ? body.stop.filter((s) => typeof s === "string") : undefined;
  const thinking = thinkingConfig(body);
  const config: Json = {
    temperature: number(body.temperature),
    topP: number(body.top_p),
    topK: number(body.top_k),
    maxOutputTokens: number(body.max_completion_tokens) ?? number(body.max_tokens),
    stopSequences: stop?.length ? stop : undefined,
    seed: number(body.seed),
    presencePenalty: number(body.presence_penalty),
    frequencyPenalty: number(body.frequency_penalty),
    candidateCount: number(body.n),
    // Log probabilities of each chosen token, with `logprobs` of the likeliest at each step.
    responseLogprobs: body.logprobs === true ? true : undefined,
    logprobs: body.logprobs === true ? number(body.top_logprobs) : undefined,
    ...responseFormat(body.response_format),
    thinkingConfig: thinking,
    responseModalities: Array.isArray(body.modalities) ? body.modalities.map((m) => String(m).toUpperCase()) : undefined,
    imageConfig: imageConfig(body.image_config),
  };
  const generationConfig = Object.fromEntries(Object.entries(config).filter(([, v]) => v !== undefined));
  const tools = declarations.length ? toolConfig(plainToolChoice(body.tool_choice)) : undefined;
  return {
    contents: turns,
    ...(system.length ? { systemInstruction: { parts: [{ text: system.join("\n\n") }] } } : {}),
    ...(declarations.length ? { tools: [{ functionDeclarations: declarations }] } : {}),
    ...(tools ? { toolConfig: tools } : {}),
    ...(Object.keys(generationConfig).length ? { generationConfig } : {}),
  };
}
