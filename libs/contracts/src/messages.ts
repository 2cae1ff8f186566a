import { z } from "zod";
import { cacheControl } from "./chat-message.js";
import { chatCompletionParams } from "./chat-request.js";
import { jsonObject } from "./shared.js";

/** The chat parameters the Messages dialect shares as they are: OpenRouter's routing and observability fields. */
const chat = chatCompletionParams.shape;

const cached = { cache_control: cacheControl.nullable().optional() };

const textBlock = z.looseObject({ type: z.literal("text"), text: z.string(), ...cached });

const base64Source = z.object({ type: z.literal("base64"), media_type: z.string().min(1), data: z.string().min(1) });
const urlSource = z.object({ type: z.literal("url"), url: z.string().regex(/^https?:\/\//, "must be an http or https URL") });
const fileSource = z.object({ type: z.literal("file"), file_id: z.string().min(1) });
const plainTextSource = z.object({ type: z.literal("text"), media_type: z.literal("text/plain"), data: z.string() });
const contentSource = z.object({ type: z.literal("content"), content: z.union([z.string(), z.array(z.looseObject({ type: z.string() }))]) });

const imageBlock = z.looseObject({ type: z.literal("image"), source: z.discriminatedUnion("type", [base64Source, urlSource, fileSource]), ...cached });
const documentBlock = z.looseObject({
  type: z.literal("document"),
  source: z.discriminatedUnion("type", [base64Source, urlSource, fileSource, plainTextSource, contentSource]),
  title: z.string().nullable().optional(),
  context: z.string().nullable().optional(),
  ...cached,
});
const toolUseBlock = z.looseObject({ type: z.literal("tool_use"), id: z.string().min(1), name: z.string().min(1), input: z.unknown(), ...cached });
const toolResultBlock = z.looseObject({
  type: z.literal("tool_result"),
  tool_use_id: z.string().min(1),
  content: z.union([z.string(), z.array(z.looseObject({ type: z.string() }))]).optional(),
  is_error: z.boolean().optional(),
  ...cached,
});
const thinkingBlock = z.looseObject({ type: z.literal("thinking"), thinking: z.string(), signature: z.string() });
const redactedThinkingBlock = z.looseObject({ type: z.literal("redacted_thinking"), data: z.string() });

const knownBlocks = ["text", "image", "document", "tool_use", "tool_result", "thinking", "redacted_thinking"];
const knownBlock = z.discriminatedUnion("type", [textBlock, imageBlock, documentBlock, toolUseBlock, toolResultBlock, thinkingBlock, redactedThinkingBlock]);
/** Blocks of other types (server tool use and results sent back, Anthropic's newer blocks) go only where Anthropic's API reads them. */
const otherBlock = z.looseObject({ type: z.string().refine((type) => !knownBlocks.includes(type)) });
export const messagesContentBlock = z.union([knownBlock, otherBlock]);
export type MessagesContentBlock = z.infer<typeof messagesContentBlock>;

const turnContent = z.union([z.string(), z.array(messagesContentBlock)]);

/** A turn; a system turn among the messages (Claude Code's environment after the first user turn) holds text only. */
export const messagesMessage = z.discriminatedUnion("role", [
  z.object({ role: z.literal("user"), content: turnContent }),
  z.object({ role: z.literal("assistant"), content: turnContent }),
  z.object({ role: z.literal("system"), content: z.union([z.string(), z.array(textBlock)]) }),
]);
export type MessagesMessage = z.infer<typeof messagesMessage>;

/** A tool the client runs, described by its JSON Schema (`type` absent or `custom`). */
export const messagesCustomTool = z.looseObject({
  type: z.literal("custom").nullable().optional(),
  name: z.string().regex(/^[A-Za-z0-9_-]{1,128}$/, "must be 1 to 128 letters, digits, '_' or '-'"),
  description: z.string().optional(),
  input_schema: jsonObject,
  ...cached,
});
/** A versioned tool Anthropic defines (`web_search_20250305`, `bash_20250124`...) or a server tool of the gateway (`openrouter:web_search`). */
const typedTool = z.looseObject({ type: z.string().min(1).refine((type) => type !== "custom", "custom tools need an input_schema") });
export const messagesTool = z.union([messagesCustomTool, typedTool]);
export type MessagesTool = z.infer<typeof messagesTool>;

const parallel = { disable_parallel_tool_use: z.boolean().optional() };
export const messagesToolChoice = z.discriminatedUnion("type", [
  z.object({ type: z.literal("auto"), ...parallel }),
  z.object({ type: z.literal("any"), ...parallel }),
  z.object({ type: z.literal("none") }),
  z.object({ type: z.literal("tool"), name: z.string().min(1), ...parallel }),
]);
export type MessagesToolChoice = z.infer<typeof messagesToolChoice>;

/**
 * How thinking appears in the answer: `omitted` keeps a thinking block's signature and leaves out its text;
 * `updates` (Anthropic's beta `thinking-display-updates-2026-08-18`) keeps the text of the short progress
 * notes between tool calls only.
 */
const thinkingDisplay = z.enum(["summarized", "omitted", "updates"]).nullable().optional();

export const messagesThinking = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("enabled"), budget_tokens: z.number().int().min(1024, "must be at least 1024"), display: thinkingDisplay }),
  z.strictObject({ type: z.literal("disabled") }),
  z.strictObject({ type: z.literal("adaptive"), display: thinkingDisplay }),
]);

/** Effort and structured output: `format` is a JSON Schema the answer must follow. */
export const messagesOutputConfig = z.strictObject({
  effort: z.enum(["low", "medium", "high", "xhigh", "max"]).nullable().optional(),
  format: z.strictObject({ type: z.literal("json_schema"), schema: jsonObject }).nullable().optional(),
});

/**
 * Fields only Anthropic's own API reads: carried to Anthropic endpoints as they are, refused for the others.
 * `safeguards` asks Anthropic to run its dangerous tool use classifier (Claude Code's auto mode sends it).
 */
export const anthropicOnlyFields = ["context_management", "safeguards"] as const;

/**
 * Settings for what Anthropic runs itself and answers with blocks of its own (code execution's container, its
 * MCP connector): the gateway does not relay those blocks, so it refuses them rather than lose what they say.
 */
export const unrelayedFields = ["container", "mcp_servers"] as const;

/** The body of `POST /messages/count_tokens`: a message request without its output settings. */
export const messagesCountTokensRequest = z.strictObject({
  model: z.string().min(1),
  messages: z.array(messagesMessage).min(1, "must have at least 1 message"),
  system: z.union([z.string(), z.array(textBlock)]).optional(),
  tools: z.array(messagesTool).optional(),
  tool_choice: messagesToolChoice.optional(),
  thinking: messagesThinking.optional(),
  output_config: messagesOutputConfig.optional(),
  cache_control: cacheControl.nullable().optional().describe("Caches everything up to the last block that can carry a marker"),
  models: z.array(z.string().min(1)).optional().describe("Fallback models, tried in order"),
  provider: chat.provider,
  container: z.unknown().optional(),
  context_management: z.unknown().optional(),
  safeguards: z.unknown().optional(),
  mcp_servers: z.unknown().optional(),
});
export type MessagesCountTokensRequest = z.infer<typeof messagesCountTokensRequest>;

/**
 * `POST /messages`: Anthropic's Messages API with OpenRouter's routing extensions. Unknown fields are refused,
 * so a setting that would have no effect never passes silently. As Anthropic's API, it takes stop sequences
 * without a count limit (endpoints that take fewer are left out by the gateway), and a thinking budget must
 * be less than `max_tokens`.
 */
export const messagesRequest = messagesCountTokensRequest
  .extend({
    max_tokens: z.number().int().min(1, "must be at least 1"),
    stop_sequences: z.array(z.string()).optional(),
    temperature: z.number().min(0).max(1).optional(),
    top_p: z.number().min(0).max(1).optional(),
    top_k: z.number().int().min(1, "must be at least 1").optional(),
    metadata: z.strictObject({ user_id: z.string().max(256).nullable().optional() }).optional(),
    stream: z.boolean().optional(),
    service_tier: z.enum(["auto", "standard_only"]).optional(),
    session_id: chat.session_id,
    trace: chat.trace,
    plugins: chat.plugins,
    user: chat.user,
  })
  .superRefine((request, ctx) => {
    if (request.thinking?.type === "enabled" && request.thinking.budget_tokens >= request.max_tokens) {
      ctx.addIssue({ code: "custom", path: ["thinking", "budget_tokens"], message: `must be less than max_tokens (${request.max_tokens})` });
    }
  });
export type MessagesRequest = z.infer<typeof messagesRequest>;

const usage = z.object({
  input_tokens: z.number().int().describe("Prompt tokens neither read from nor written to the cache"),
  output_tokens: z.number().int(),
  cache_creation_input_tokens: z.number().int(),
  cache_read_input_tokens: z.number().int(),
});

/** The `message` a buffered Messages request answers with. */
export const messageObject = z.looseObject({
  id: z.string().describe("The generation id, for GET /generation?id="),
  type: z.literal("message"),
  role: z.literal("assistant"),
  model: z.string(),
  content: z.array(z.looseObject({ type: z.string() })),
  stop_reason: z.enum(["end_turn", "max_tokens", "stop_sequence", "tool_use", "pause_turn", "refusal", "model_context_window_exceeded"]).nullable(),
  stop_sequence: z.string().nullable(),
  usage,
});

export const messagesTokenCount = z.object({
  input_tokens: z.number().int(),
  estimated: z.literal(true).optional().describe("Present when no Anthropic endpoint counted: characters ÷ 4, and 1600 per image or document"),
});
