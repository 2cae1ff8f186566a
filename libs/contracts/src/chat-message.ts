import { z } from "zod";
import { jsonObject } from "./shared.js";

/** Prompt-cache marker on a block or at the top level; `ttl` is Anthropic's `5m` or `1h`. */
export const cacheControl = z.object({ type: z.literal("ephemeral"), ttl: z.enum(["5m", "1h"]).optional() });
export type CacheControl = z.infer<typeof cacheControl>;

/** With prompt_cache_options.mode `explicit`, only blocks carrying this marker are cached. */
const promptCacheBreakpoint = z.object({ mode: z.literal("explicit") }).nullable().optional();

export const textPart = z.looseObject({
  type: z.literal("text"),
  text: z.string(),
  cache_control: cacheControl.optional(),
  prompt_cache_breakpoint: promptCacheBreakpoint,
});
const imagePart = z.looseObject({
  type: z.literal("image_url"),
  image_url: z.object({ url: z.string().min(1), detail: z.enum(["auto", "low", "high", "original"]).optional() }),
});
const audioPart = z.looseObject({
  type: z.literal("input_audio"),
  input_audio: z.object({ data: z.string().min(1), format: z.string().min(1) }),
});
const filePart = z.looseObject({
  type: z.literal("file"),
  file: z.object({ filename: z.string().optional(), file_data: z.string().optional(), file_id: z.string().optional() }),
});
const videoUrl = z.looseObject({ url: z.string().min(1) });
const videoPart = z.looseObject({ type: z.literal("video_url"), video_url: videoUrl });
const legacyVideoPart = z.looseObject({ type: z.literal("input_video"), video_url: videoUrl });

export const contentPart = z.discriminatedUnion("type", [textPart, imagePart, audioPart, filePart, videoPart, legacyVideoPart]);
export type ContentPart = z.infer<typeof contentPart>;

const textContent = z.union([z.string(), z.array(textPart)]);
const richContent = z.union([z.string(), z.array(contentPart)]);

const name = z.string().optional();

export const toolCall = z.object({
  id: z.string(),
  type: z.literal("function"),
  function: z.object({ name: z.string(), arguments: z.string().describe("JSON-encoded arguments") }),
  extra_content: jsonObject.optional().describe("Provider data of the call, sent back as it came (Google's thought signature)"),
});
export type ToolCall = z.infer<typeof toolCall>;

export const serverToolCallType = "reasoning.server_tool_call";

/**
 * A server tool call the gateway ran, with its result, as `@openrouter/sdk` reads it in
 * `reasoning_details`. Sent back in a later request it tells the model what the call returned; it is
 * never run again.
 */
export const serverToolCallDetail = z.object({
  type: z.literal(serverToolCallType),
  tool_name: z.string().min(1).describe("The server tool's type, e.g. openrouter:web_search"),
  tool_call_id: z.string().nullable().optional(),
  arguments: z.string().describe("JSON-encoded arguments"),
  result: z.string().describe("JSON-encoded result; sandboxed tools' results carry their container_id"),
  id: z.string().nullable().optional(),
  index: z.number().int().optional(),
  format: z.string().nullable().optional(),
});
export type ServerToolCallDetail = z.infer<typeof serverToolCallDetail>;

/** Reasoning sent back as it came; the entries of server tool calls are checked, since they are replayed. */
const reasoningDetailIn = z.looseObject({ type: z.string() }).superRefine((value, ctx) => {
  if (value.type !== serverToolCallType) return;
  const parsed = serverToolCallDetail.safeParse(value);
  if (!parsed.success) for (const issue of parsed.error.issues) ctx.addIssue({ code: "custom", message: issue.message, path: issue.path });
});

export const systemMessage = z.looseObject({ role: z.literal("system"), content: textContent, name });
export const developerMessage = z.looseObject({ role: z.literal("developer"), content: textContent, name });
export const userMessage = z.looseObject({ role: z.literal("user"), content: richContent, name });
export const assistantMessage = z.looseObject({
  role: z.literal("assistant"),
  content: richContent.nullable().optional(),
  name,
  tool_calls: z.array(toolCall).optional(),
  reasoning: z.string().nullable().optional(),
  reasoning_details: z.array(reasoningDetailIn).optional(),
  refusal: z.string().nullable().optional(),
});
export const toolMessage = z.looseObject({ role: z.literal("tool"), content: richContent, tool_call_id: z.string().min(1) });

export const chatMessage = z.discriminatedUnion("role", [
  systemMessage,
  developerMessage,
  userMessage,
  assistantMessage,
  toolMessage,
]);
export type ChatMessage = z.infer<typeof chatMessage>;

/** OpenAI's rule for function names, which every major provider accepts. */
const functionName = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "must be 1 to 64 letters, digits, '_' or '-'");

export const functionTool = z.object({
  type: z.literal("function"),
  function: z.object({
    name: functionName,
    description: z.string().optional(),
    parameters: jsonObject.optional().describe("JSON Schema of the arguments"),
    strict: z.boolean().nullable().optional(),
  }),
  cache_control: cacheControl.optional(),
});

/** Built-in server tools (`openrouter:web_search`, ...) carry their own settings beside `type`. */
export const serverTool = z.looseObject({
  type: z.string().refine((type) => type !== "function", "function tools need a function object"),
});

export const chatTool = z.union([functionTool, serverTool]);
export type ChatTool = z.infer<typeof chatTool>;

/** OpenAI's `allowed_tools` choice: the model may call only these functions; `required` makes it call one. */
const allowedToolsChoice = z.object({
  type: z.literal("allowed_tools"),
  allowed_tools: z.object({
    mode: z.enum(["auto", "required"]),
    tools: z.array(z.looseObject({ type: z.literal("function"), function: z.looseObject({ name: functionName }) })).min(1, "must name at least 1 function"),
  }),
});

/** Choice types with a shape of their own; every other type names a server tool of the request. */
const shapedChoices = new Set(["function", "allowed_tools"]);

const choiceBranches = [
  z.enum(["none", "auto", "required"]),
  z.object({ type: z.literal("function"), function: z.object({ name: functionName }) }),
  allowedToolsChoice,
  z.object({ type: z.string().refine((type) => !shapedChoices.has(type), { message: "has a shape of its own", abort: true }) }),
] as const;

/** The branch of `choiceBranches` a value is meant for, so that a bad choice is told by that branch's first problem. */
const choiceBranch = (input: unknown): number => {
  if (typeof input === "string") return 0;
  const type = typeof input === "object" && input !== null ? (input as { type?: unknown }).type : undefined;
  return type === "function" ? 1 : type === "allowed_tools" ? 2 : 3;
};

export const toolChoice = z.union(choiceBranches, {
  error: (issue) => {
    if (issue.code !== "invalid_union") return undefined;
    const first = issue.errors[choiceBranch(issue.input)]?.[0];
    if (!first || (first.code === "invalid_type" && first.path.length === 0)) return 'must be none, auto, required, {"type": "function", ...}, {"type": "allowed_tools", ...} or a server tool\'s {"type": ...}';
    return `${first.path.join(".")}${first.path.length ? ": " : ""}${first.message}`;
  },
});
export type ToolChoice = z.infer<typeof toolChoice>;
