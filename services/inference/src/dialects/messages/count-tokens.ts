import { messagesCountTokensRequest, type MessagesCountTokensRequest } from "@switchyard/contracts";
import { parseInput, sendJson, type Caller } from "@switchyard/runtime";
import { targetOf, upstreamFailure } from "@switchyard/upstream";
import type { ServerResponse } from "node:http";
import { estimateTokens } from "../../cost.js";
import type { InferenceDeps } from "../../deps.js";
import { buildPlan } from "../../generation/plan.js";
import { countTokens } from "../../providers/anthropic.js";
import type { JsonRequest } from "../chat/route.js";
import { anthropicHeaders } from "./native.js";
import { toChatRequest } from "./request.js";

/** What an image or a document counts for in an estimate: about what Anthropic charges for a picture of a megapixel. */
export const tokensPerAttachment = 1600;

/**
 * An estimate of a request's input tokens where no endpoint counts them: a token for every four characters of
 * the text the model reads (system prompt, messages, tool inputs and results, tool definitions), and
 * `tokensPerAttachment` for each image and document.
 */
export function estimateInputTokens(request: MessagesCountTokensRequest): number {
  let attachments = 0;
  const texts: string[] = [];
  const walk = (value: unknown): void => {
    if (typeof value === "string") return void texts.push(value);
    if (Array.isArray(value)) return value.forEach(walk);
    if (!value || typeof value !== "object") return;
    const block = value as Record<string, unknown>;
    if (block.type === "image" || block.type === "document") return void (attachments += 1);
    // Encrypted thinking is not text the model reads again as words.
    if (block.type === "redacted_thinking") return;
    for (const [key, field] of Object.entries(block)) if (key !== "type" && key !== "cache_control" && key !== "signature" && key !== "id" && key !== "tool_use_id") walk(field);
  };
  walk(request.system);
  walk(request.messages.map((m) => m.content));
  if (request.tools?.length) texts.push(JSON.stringify(request.tools));
  return estimateTokens(texts.join("\n")) + attachments * tokensPerAttachment;
}

/**
 * The request as `POST /messages` sends it: with its preset's system prompt when the client sent none, as
 * `nativeBody` and the chat translation add it. The planned body holds that prompt as its first message (after
 * the guardrails' filters); a Messages request brings no system message of its own without `system`.
 */
function asSent(request: MessagesCountTokensRequest, planned: Readonly<Record<string, unknown>>): MessagesCountTokensRequest {
  if (request.system !== undefined) return request;
  const first: unknown = Array.isArray(planned.messages) ? planned.messages[0] : undefined;
  const message = first && typeof first === "object" ? (first as { role?: unknown; content?: unknown }) : {};
  return message.role === "system" && typeof message.content === "string" ? { ...request, system: message.content } : request;
}

/**
 * `POST /messages/count_tokens`: the first endpoint of the request's model counts, when it is Anthropic's and
 * no guardrail redacted the prompt; otherwise the answer is an estimate and says so (`estimated: true`). What is
 * counted is what `POST /messages` would send, a preset's system prompt included. Nothing is held or charged.
 */
export const countTokensRoute =
  (deps: InferenceDeps) =>
  async (req: JsonRequest, res: ServerResponse, caller: Caller): Promise<void> => {
    const request = parseInput(messagesCountTokensRequest, req.body, "body");
    const plan = await buildPlan(deps, { headers: req.headers, res, caller, dialect: "messages", body: toChatRequest(request).chat, counting: true });
    // Counting makes no generation.
    res.removeHeader("X-Generation-Id");
    const first = plan.candidates[0]!;
    // What Anthropic counts is the client's own body, which a redaction never reaches: a redacted prompt is estimated.
    const redacted = plan.findings.some((f) => f.action === "redact");
    const sent = asSent(request, plan.body);
    if (first.endpoint.adapter !== "anthropic" || redacted) return void sendJson(res, 200, { input_tokens: estimateInputTokens(sent), estimated: true });
    // Anthropic counts the body as the client wrote it, less the gateway's routing fields, with the preset's system prompt.
    const { models: _models, provider: _provider, ...body } = req.body as Record<string, unknown>;
    if (sent.system !== request.system) body.system = sent.system;
    const target = { ...targetOf(first.endpoint, deps.env, first.byokKey), headers: anthropicHeaders(req.headers) };
    try {
      sendJson(res, 200, { input_tokens: await countTokens(body, target, plan.signal) });
    } catch (error) {
      throw upstreamFailure(error, plan.timedOut());
    }
  };
