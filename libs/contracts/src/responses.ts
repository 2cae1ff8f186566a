import { z } from "zod";
import { cacheControl, functionTool, serverTool } from "./chat-message.js";
import { chatCompletionParams, reasoningConfig } from "./chat-request.js";
import { jsonObject } from "./shared.js";

/** The chat parameters the Responses dialect shares as they are: the same limits and messages. */
const chat = chatCompletionParams.shape;
const functionName = functionTool.shape.function.shape.name;

/** Switchyard keeps nothing between requests, as OpenRouter does not. */
const stateless = "Switchyard does not store responses; send the whole conversation in input";

/** The first problem of the union branch `pick` chooses for the value, in place of zod's "Invalid input". */
const branchError =
  (pick: (input: unknown) => number, expected: string) =>
  (issue: z.core.$ZodRawIssue): string | undefined => {
    if (issue.code !== "invalid_union") return undefined;
    const first = issue.errors[pick(issue.input)]?.[0];
    if (!first || (first.code === "invalid_type" && first.path.length === 0)) return `must be ${expected}`;
    return `${first.path.join(".")}${first.path.length ? ": " : ""}${first.message}`;
  };

/** A string, or a list whose problems are told item by item. */
const textOr = <T extends z.ZodType>(list: T, expected: string) =>
  z.union([z.string(), list], { error: branchError((input) => (typeof input === "string" ? 0 : 1), `a string or ${expected}`) });

/** A JSON object, not an array. */
const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

const inputText = z.looseObject({
  type: z.literal("input_text"),
  text: z.string(),
  cache_control: cacheControl.optional(),
  prompt_cache_breakpoint: z.object({ mode: z.literal("explicit") }).nullable().optional(),
});
const inputImage = z
  .looseObject({
    type: z.literal("input_image"),
    image_url: z.string().min(1).nullable().optional().describe("An https URL or a data: URL"),
    file_id: z.string().min(1).nullable().optional(),
    detail: z.enum(["auto", "low", "high", "original"]).optional(),
  })
  .refine((part) => Boolean(part.image_url || part.file_id), "an input_image needs image_url or file_id");
const inputFile = z
  .looseObject({
    type: z.literal("input_file"),
    file_data: z.string().min(1).optional().describe("A data: URL of the file"),
    file_url: z.string().min(1).optional(),
    file_id: z.string().min(1).nullable().optional(),
    filename: z.string().optional(),
  })
  .refine((part) => Boolean(part.file_data || part.file_url || part.file_id), "an input_file needs file_data, file_url or file_id");
const inputAudio = z.looseObject({
  type: z.literal("input_audio"),
  input_audio: z.object({ data: z.string().min(1), format: z.string().min(1) }),
});
const outputText = z.looseObject({ type: z.literal("output_text"), text: z.string() });
const refusal = z.looseObject({ type: z.literal("refusal"), refusal: z.string() });

export const responsesContentPart = z.discriminatedUnion("type", [inputText, inputImage, inputFile, inputAudio, outputText, refusal]);
export type ResponsesContentPart = z.infer<typeof responsesContentPart>;

const partsOf = {
  user: ["input_text", "input_image", "input_file", "input_audio"],
  system: ["input_text"],
  developer: ["input_text"],
  assistant: ["output_text", "input_text", "refusal"],
} as const;

/** Each role takes the parts a chat message of that role can carry. */
function checkMessageContent(message: { role: keyof typeof partsOf; content: string | ResponsesContentPart[] | null }, ctx: z.RefinementCtx): void {
  if (message.content === null && message.role !== "assistant") ctx.addIssue({ code: "custom", path: ["content"], message: "is required" });
  if (!Array.isArray(message.content)) return;
  const allowed: readonly string[] = partsOf[message.role];
  message.content.forEach((part, i) => {
    if (!allowed.includes(part.type)) {
      ctx.addIssue({ code: "custom", path: ["content", i, "type"], message: `a ${message.role} message takes ${allowed.join(", ")} parts, not ${part.type}` });
    }
  });
}

const itemStatus = z.enum(["in_progress", "completed", "incomplete"]).optional();

const messageItem = z
  .looseObject({
    type: z.literal("message"),
    role: z.enum(["user", "system", "developer", "assistant"]),
    content: textOr(z.array(responsesContentPart), "a list of content parts").nullable(),
    id: z.string().optional(),
    status: itemStatus,
  })
  .superRefine(checkMessageContent);

const functionCallItem = z.looseObject({
  type: z.literal("function_call"),
  call_id: z.string().min(1),
  name: z.string().min(1),
  namespace: z.string().min(1).nullable().optional().describe("The namespace tool the function belongs to"),
  arguments: z.string().describe("JSON-encoded arguments"),
  id: z.string().optional(),
  status: itemStatus,
});

const functionCallOutputItem = z.looseObject({
  type: z.literal("function_call_output"),
  call_id: z.string().min(1),
  output: textOr(z.array(z.discriminatedUnion("type", [inputText, inputImage, inputFile])), "a list of input_text, input_image and input_file parts"),
  id: z.string().optional(),
  status: itemStatus,
});

const reasoningItem = z.looseObject({
  type: z.literal("reasoning"),
  id: z.string().optional(),
  summary: z.array(z.looseObject({ type: z.literal("summary_text"), text: z.string() })).nullable().optional(),
  content: z.array(z.looseObject({ type: z.literal("reasoning_text"), text: z.string() })).nullable().optional(),
  encrypted_content: z.string().nullable().optional().describe("Sent back unchanged from an earlier answer; without a switchyard: mark it is OpenAI's, unless format names another"),
  signature: z.string().nullable().optional().describe("A thinking block's signature, as older answers gave it"),
  format: z.string().nullable().optional().describe("The provider's format of unmarked encrypted_content or a signature, as older answers gave it"),
  status: itemStatus,
});

/** The server tools whose calls Switchyard runs, by the item type an answer shows them with. */
export const serverToolItemTypes = ["openrouter:web_search", "openrouter:web_fetch", "openrouter:datetime", "openrouter:bash", "openrouter:shell"] as const;

const serverToolItem = z.looseObject({
  type: z.enum(serverToolItemTypes),
  id: z.string().optional(),
  call_id: z.string().nullable().optional(),
  arguments: z.string().nullable().optional(),
  status: z.string().optional(),
});

const itemReference = z
  .looseObject({ type: z.literal("item_reference"), id: z.string().optional() })
  .refine(() => false, `item_reference is not supported: ${stateless}`);

/** A message item may leave out its type, as OpenAI's easy input messages do. */
const typed = (value: unknown): unknown => (isRecord(value) && value.type === undefined && "role" in value ? { ...value, type: "message" } : value);

export const responsesInputItem = z.preprocess(
  typed,
  z.discriminatedUnion("type", [messageItem, functionCallItem, functionCallOutputItem, reasoningItem, serverToolItem, itemReference], {
    error: (issue) => {
      const type = isRecord(issue.input) ? issue.input.type : undefined;
      return `${JSON.stringify(type) ?? "an item without a type"} is not an input item Switchyard takes; it takes message, function_call, function_call_output, reasoning and ${serverToolItemTypes.join(", ")}`;
    },
  }),
);
export type ResponsesInputItem = z.infer<typeof responsesInputItem>;

export const responsesFunctionTool = z.looseObject({
  type: z.literal("function"),
  name: functionName,
  description: z.string().nullable().optional(),
  parameters: jsonObject.nullable().optional().describe("JSON Schema of the arguments"),
  strict: z.boolean().nullable().optional(),
});
export type ResponsesFunctionTool = z.infer<typeof responsesFunctionTool>;

/** A tool of a namespace: a function tool; a custom tool or another type is refused, naming its type. */
const namespacedTool = z
  .custom<z.input<typeof responsesFunctionTool>>(() => true)
  .refine((tool) => isRecord(tool) && tool.type === "function", {
    path: ["type"],
    error: (issue) => `a namespace takes function tools only, not ${JSON.stringify(isRecord(issue.input) ? issue.input.type : undefined) ?? "a tool without a type"}`,
  })
  .pipe(responsesFunctionTool);

/** Function tools grouped under a name, as Codex declares its sub-agent tools; calls of them carry `namespace`. */
export const responsesNamespaceTool = z.looseObject({
  type: z.literal("namespace"),
  name: z.string().min(1),
  description: z.string().nullable().optional(),
  tools: z.array(namespacedTool).min(1, "must hold at least 1 function tool"),
});
export type ResponsesNamespaceTool = z.infer<typeof responsesNamespaceTool>;

const toolBranch = (input: unknown): number => (isRecord(input) && input.type === "function" ? 0 : isRecord(input) && input.type === "namespace" ? 1 : 2);

export const responsesTool = z.union([responsesFunctionTool, responsesNamespaceTool, serverTool.refine((tool) => tool.type !== "namespace", { abort: true })], {
  error: branchError(toolBranch, "a function tool, a namespace tool or a server tool"),
});
export type ResponsesTool = z.infer<typeof responsesTool>;

export const namedChoice = z.object({ type: z.literal("function"), name: functionName });
const choiceTypes = ["function", "allowed_tools", "mcp", "custom"];
export const responsesToolChoice = z
  .union([z.enum(["auto", "none", "required"]), z.object({ type: z.string().min(1), name: functionName.optional() })], {
    error: branchError((input) => (typeof input === "string" ? 0 : 1), 'auto, none, required, {"type": "function", "name": ...} or a server tool\'s {"type": ...}'),
  })
  .superRefine((choice, ctx) => {
    if (typeof choice === "string") return;
    if (choice.type === "function" && !choice.name) ctx.addIssue({ code: "custom", path: ["name"], message: "is required to choose a function" });
    if (choice.type !== "function" && choiceTypes.includes(choice.type)) ctx.addIssue({ code: "custom", path: ["type"], message: "must name a server tool of the request" });
  });
export type ResponsesToolChoice = z.infer<typeof responsesToolChoice>;

export const responsesTextFormat = z.discriminatedUnion("type", [
  z.object({ type: z.literal("text") }),
  z.object({ type: z.literal("json_object") }),
  z.object({
    type: z.literal("json_schema"),
    name: z.string().min(1).max(64),
    schema: jsonObject.describe("JSON Schema the answer follows"),
    description: z.string().optional(),
    strict: z.boolean().nullable().optional(),
  }),
]);
export type ResponsesTextFormat = z.infer<typeof responsesTextFormat>;

export const responsesText = z.object({
  format: responsesTextFormat.optional(),
  verbosity: z.enum(["low", "medium", "high", "xhigh", "max"]).nullable().optional(),
});

/** The one value of `include` Switchyard takes: OpenAI's endpoints get it (as when reasoning is on); other providers' signed reasoning is always in answers. */
export const includableReasoning = "reasoning.encrypted_content";

const includeValue = z.string().refine((value) => value === includableReasoning, {
  error: (issue) => `include value ${JSON.stringify(issue.input)} is not supported; only ${includableReasoning} is`,
});

/** A field of OpenAI's stored-response features, refused unless absent or null. */
const refused = (message: string) => z.unknown().refine((value) => value === undefined || value === null, message).optional();

/** A setting whose one value `bad` Switchyard cannot honour; every other is taken. */
const refusing = <T extends z.ZodType>(schema: T, bad: unknown, message: string) => schema.refine((value) => value !== bad, message);

/**
 * `POST /responses` body (OpenAI's Responses API as OpenRouter serves it). Unknown fields are refused: a
 * setting accepted has its effect. Switchyard is stateless, so the stored-response features are refused.
 */
export const responsesRequest = z
  .strictObject({
    input: textOr(z.array(responsesInputItem), "a list of input items").optional(),
    instructions: z.string().nullable().optional().describe("Sent to the model as a leading system message"),
    model: chat.model,
    models: chat.models,
    tools: z.array(responsesTool).optional(),
    tool_choice: responsesToolChoice.optional(),
    parallel_tool_calls: chat.parallel_tool_calls,
    max_output_tokens: z.number().int().min(1).nullable().optional(),
    max_tool_calls: chat.max_tool_calls.unwrap().nullable().optional(),
    temperature: chat.temperature,
    top_p: chat.top_p,
    top_k: chat.top_k,
    frequency_penalty: chat.frequency_penalty,
    presence_penalty: chat.presence_penalty,
    reasoning: reasoningConfig.nullable().optional(),
    text: responsesText.nullable().optional(),
    metadata: chat.metadata.unwrap().nullable().optional(),
    client_metadata: z
      .record(z.string().max(64), z.string().max(8192))
      .refine((pairs) => Object.keys(pairs).length <= 32, "must have at most 32 pairs")
      .nullable()
      .optional()
      .describe("The client's own labels (Codex sends its session and turn); OpenAI's Responses endpoints get them, others have no place for them"),
    user: chat.user,
    safety_identifier: z.string().nullable().optional().describe("End-user id, hashed per workspace; OpenAI gets it as safety_identifier, others as user when user is absent"),
    provider: chat.provider,
    plugins: chat.plugins,
    session_id: chat.session_id,
    trace: chat.trace,
    stop_server_tools_when: chat.stop_server_tools_when,
    prompt_cache_key: chat.prompt_cache_key,
    prompt_cache_options: chat.prompt_cache_options,
    cache_control: chat.cache_control,
    service_tier: chat.service_tier,
    stream: z.boolean().default(false),
    previous_response_id: refused(`previous_response_id is not supported: ${stateless}`),
    conversation: refused("conversation is not supported: Switchyard does not store conversations; send the whole conversation in input"),
    store: refusing(z.boolean().nullable().optional(), true, `store: true is not supported: ${stateless}; send store: false or leave it out`),
    background: refusing(z.boolean().nullable().optional(), true, "background: true is not supported: Switchyard answers within the request; send false or leave it out"),
    truncation: refusing(z.enum(["auto", "disabled"]).nullable().optional(), "auto", 'truncation: "auto" is not supported: Switchyard never drops input to fit; only "disabled" is'),
    include: z.array(includeValue).nullable().optional(),
  })
  .superRefine((request, ctx) => {
    if (request.input === undefined) ctx.addIssue({ code: "custom", path: ["input"], message: "is required: send the conversation as a string or a list of items" });
  });
export type ResponsesRequest = z.infer<typeof responsesRequest>;
export type ResponsesRequestInput = z.input<typeof responsesRequest>;
