import { z } from "zod";
import { serverTool } from "./chat-message.js";
import { namedChoice, responsesTextFormat } from "./responses.js";
import { jsonObject } from "./shared.js";

/** The Responses API's answer: its output items, usage and the response object. */

const urlCitation = z.object({ type: z.literal("url_citation"), url: z.string(), title: z.string(), start_index: z.number().int(), end_index: z.number().int() });
const outputStatus = z.enum(["in_progress", "completed", "incomplete"]);
const summaryText = z.object({ type: z.literal("summary_text"), text: z.string() });
const reasoningText = z.object({ type: z.literal("reasoning_text"), text: z.string() });

export const responseOutputText = z.object({
  type: z.literal("output_text"),
  text: z.string(),
  annotations: z.array(urlCitation).describe("Web citations the provider gave"),
  logprobs: z.array(z.unknown()),
});

/** The model declined to answer: its reason, in place of (or after) its words. */
export const responseRefusal = z.object({ type: z.literal("refusal"), refusal: z.string() });

export const responseMessageItem = z.object({
  type: z.literal("message"),
  id: z.string(),
  role: z.literal("assistant"),
  status: outputStatus,
  content: z.array(z.discriminatedUnion("type", [responseOutputText, responseRefusal])),
});

export const responseReasoningItem = z.object({
  type: z.literal("reasoning"),
  id: z.string().describe("The provider's id of encrypted reasoning when it gave one (Gemini's tool call id, OpenAI's rs_ id)"),
  status: outputStatus,
  summary: z.array(summaryText),
  content: z.array(reasoningText).optional().describe("The model's own reasoning text, when it is not a summary"),
  encrypted_content: z.string().optional().describe("What the provider needs to continue, to send back unchanged: OpenAI's as it is, another's marked switchyard:<kind>:<format>:<id>:"),
  format: z.string().optional().describe("The provider's reasoning format, e.g. anthropic-claude-v1"),
});

export const responseFunctionCallItem = z.object({
  type: z.literal("function_call"),
  id: z.string(),
  call_id: z.string(),
  name: z.string(),
  namespace: z.string().optional().describe("The namespace tool the function belongs to"),
  arguments: z.string(),
  status: outputStatus,
});

const shellOutcome = z.discriminatedUnion("type", [z.object({ type: z.literal("exit"), exit_code: z.number().int() }), z.object({ type: z.literal("timeout") })]);
const serverStatus = z.enum(["in_progress", "completed", "incomplete", "failed"]);
const serverBase = { id: z.string(), status: serverStatus };
const callBase = { ...serverBase, call_id: z.string().nullable(), arguments: z.string(), container_id: z.string().optional(), error: z.string().optional() };

/** The server tool calls Switchyard ran, as OpenRouter shows them; a call that failed carries `error`. */
export const responseServerToolItem = z.discriminatedUnion("type", [
  z.object({
    type: z.literal("openrouter:web_search"),
    ...serverBase,
    action: z.object({ type: z.literal("search"), query: z.string(), sources: z.array(z.object({ type: z.literal("url"), url: z.string() })) }),
  }),
  // `url` is the page's after redirects (the one asked for when the fetch failed); `content` is the text the model read.
  z.object({ type: z.literal("openrouter:web_fetch"), ...serverBase, url: z.string().optional(), title: z.string().optional(), content: z.string().optional(), httpStatus: z.number().int().optional(), error: z.string().optional() }),
  z.object({ type: z.literal("openrouter:datetime"), ...serverBase, datetime: z.string(), timezone: z.string() }),
  z.object({
    type: z.literal("openrouter:bash"),
    ...callBase,
    command: z.string().optional(),
    stdout: z.string().optional(),
    stderr: z.string().optional(),
    exitCode: z.number().int().optional(),
  }),
  z.object({
    type: z.literal("openrouter:shell"),
    ...callBase,
    action: z.object({ commands: z.array(z.string()), timeout_ms: z.number().int().nullable().optional() }),
    output: z.array(z.object({ stdout: z.string(), stderr: z.string(), outcome: shellOutcome })).optional(),
  }),
]);

export const responseOutputItem = z.discriminatedUnion("type", [responseMessageItem, responseReasoningItem, responseFunctionCallItem, responseServerToolItem]);
export type ResponseOutputItem = z.infer<typeof responseOutputItem>;

export const responseUsage = z.object({
  input_tokens: z.number().int().min(0),
  input_tokens_details: z.object({ cached_tokens: z.number().int().min(0), cache_write_tokens: z.number().int().min(0).optional() }),
  output_tokens: z.number().int().min(0),
  output_tokens_details: z.object({ reasoning_tokens: z.number().int().min(0) }),
  total_tokens: z.number().int().min(0),
  cost: z.number().min(0).describe("USD charged for this generation"),
  is_byok: z.boolean(),
  cost_details: z.object({ upstream_inference_cost: z.number(), upstream_inference_input_cost: z.number(), upstream_inference_output_cost: z.number() }),
  server_tool_use_details: z.object({
    tool_calls_requested: z.number().int().min(0),
    tool_calls_executed: z.number().int().min(0),
    web_search_requests: z.number().int().min(0).optional(),
  }),
});
export type ResponseUsage = z.infer<typeof responseUsage>;

/** The request's tools as an answer repeats them: a function tool's absent fields are null, an absent `strict` true. */
const echoedFunction = z.object({ type: z.literal("function"), name: z.string(), description: z.string().nullable(), parameters: jsonObject.nullable(), strict: z.boolean().nullable() });
const echoedTool = z.union([
  echoedFunction,
  z.object({ type: z.literal("namespace"), name: z.string(), description: z.string(), tools: z.array(echoedFunction) }),
  serverTool,
]);

/** The echoed tool_choice: a server tool chosen by a type OpenAI does not know is shown as `required`. */
const echoedToolChoice = z.union([
  z.enum(["auto", "none", "required"]),
  namedChoice,
  z.object({ type: z.enum(["web_search_preview", "web_search_preview_2025_03_11", "shell", "apply_patch"]) }),
]);

/** Non-streaming `POST /responses` 200 body, and the `response` of the stream's lifecycle events. */
export const responseObject = z.object({
  id: z.string().describe("The generation id, for GET /generation?id="),
  object: z.literal("response"),
  created_at: z.number().int().describe("Unix timestamp"),
  completed_at: z.number().int().nullable(),
  status: z.enum(["in_progress", "completed", "incomplete", "failed"]),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
  incomplete_details: z.object({ reason: z.enum(["max_output_tokens", "content_filter"]) }).nullable(),
  model: z.string().describe("The model that served the request"),
  output: z.array(responseOutputItem),
  output_text: z.string().describe("The text of every message item's output_text parts, joined"),
  instructions: z.string().nullable(),
  tools: z.array(echoedTool),
  tool_choice: echoedToolChoice,
  parallel_tool_calls: z.boolean(),
  temperature: z.number().nullable(),
  top_p: z.number().nullable(),
  presence_penalty: z.number().nullable(),
  frequency_penalty: z.number().nullable(),
  max_output_tokens: z.number().int().nullable(),
  max_tool_calls: z.number().int().nullable(),
  metadata: z.record(z.string(), z.string()),
  reasoning: z.object({ effort: z.string().nullable(), summary: z.string().nullable() }),
  text: z.object({ format: responsesTextFormat, verbosity: z.string().optional() }),
  user: z.string().nullable(),
  safety_identifier: z.string().nullable(),
  prompt_cache_key: z.string().nullable(),
  service_tier: z.string().nullable(),
  store: z.literal(false),
  background: z.literal(false),
  truncation: z.literal("disabled"),
  previous_response_id: z.null(),
  usage: responseUsage.nullable(),
});
export type ResponseObject = z.infer<typeof responseObject>;
