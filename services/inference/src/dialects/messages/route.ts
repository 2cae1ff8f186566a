import { messagesRequest, type MessagesRequest } from "@switchyard/contracts";
import { badRequest, parseInput, sendJson, type Caller } from "@switchyard/runtime";
import type { Candidate } from "@switchyard/upstream";
import type { ServerResponse } from "node:http";
import type { Accounted } from "../../accounting.js";
import type { InferenceDeps } from "../../deps.js";
import { loopCompletion, runAgent } from "../../generation/agent.js";
import { planGeneration, type Generation, type OwnWire } from "../../generation/generation.js";
import { buildPlan, type Plan } from "../../generation/plan.js";
import { bufferedTurn, relayTurn } from "../../generation/turns.js";
import type { DeclaredTools } from "../../tools/declared.js";
import type { JsonRequest } from "../chat/route.js";
import { EventStream } from "../event-stream.js";
import { messageBody } from "./answer.js";
import { MessagesEvents } from "./events.js";
import { anthropicHeaders, messagesWire } from "./native.js";
import { toChatRequest, type MappedMessages } from "./request.js";

/** A streamed message: Anthropic's events. */
class MessagesStream extends EventStream<MessagesEvents> {
  constructor(
    private readonly plan: Plan,
    res: ServerResponse,
    private readonly omitThinking: boolean,
  ) {
    super(res, plan.generationId);
  }

  protected begin(model: string): MessagesEvents {
    return new MessagesEvents((event) => this.sse.event(String(event.type), event), { id: this.plan.generationId, model, omitThinking: this.omitThinking });
  }

  finish(generation: Generation, candidate: Candidate, accounted: Accounted, finishReason: string | null): void {
    this.events(candidate.model).finish(accounted, finishReason, generation.metadata(candidate, generation.turn.findings, this.plan.started));
  }
}

async function buffered(plan: Plan, tools: DeclaredTools | undefined, own: OwnWire | undefined, res: ServerResponse, omitThinking: boolean) {
  if (tools) {
    const result = await runAgent(plan, tools);
    const { completion, serverCalls } = loopCompletion(result);
    const { candidate } = result.buffered;
    const metadata = result.generation.metadata(candidate, result.findings, plan.started);
    const body = messageBody({ id: plan.generationId, model: candidate.model, omitThinking }, completion.choices[0], result.total, { serverCalls, finishReason: result.finishReason, metadata });
    return void sendJson(res, 200, body);
  }
  const generation = planGeneration(plan, own);
  const turn = await bufferedTurn(generation);
  const metadata = generation.metadata(turn.candidate, plan.findings);
  sendJson(res, 200, messageBody({ id: plan.generationId, model: turn.candidate.model, omitThinking }, turn.completion.choices[0], turn.accounted, { metadata }));
}

async function streamed(plan: Plan, tools: DeclaredTools | undefined, own: OwnWire | undefined, res: ServerResponse, omitThinking: boolean) {
  const sink = new MessagesStream(plan, res, omitThinking);
  if (tools) {
    const result = await runAgent(plan, tools, sink);
    if (result) sink.finish(result.generation, result.streamed.candidate, result.total, result.finishReason);
    return void res.end();
  }
  sink.keepAlive(true);
  const generation = planGeneration(plan, own);
  const turn = await relayTurn(generation, sink);
  if (turn?.status === "completed") sink.finish(generation, turn.candidate, turn.accounted, turn.nativeFinishReason);
  res.end();
}

/** Whether the request can go to Anthropic endpoints as the client wrote it (no gateway work changes its body). */
const sendsOwnBody = (mapped: MappedMessages): boolean =>
  !mapped.replayed && !(Array.isArray(mapped.chat.tools) && mapped.chat.tools.some((t: { type?: unknown }) => String(t.type).startsWith("openrouter:")));

/** What only Anthropic's API reads leaves the other endpoints out; 400 naming it when none is left. */
function anthropicOnly(mapped: MappedMessages, ownBody: boolean) {
  if (mapped.anthropicOnly.length === 0) return undefined;
  const refusal = `${mapped.anthropicOnly.join("; ")}: only Anthropic endpoints carry ${mapped.anthropicOnly.length > 1 ? "these" : "this"}, with the request as sent`;
  return (candidate: Candidate) => (ownBody && candidate.endpoint.adapter === "anthropic" ? undefined : refusal);
}

/**
 * The own wire, unless the gateway changed the prompt on its way (a guardrail redacted it, context compression
 * trimmed it): then Anthropic endpoints get the translation of the changed prompt too.
 */
function ownWireFor(plan: Plan, request: MessagesRequest, req: JsonRequest, mapped: MappedMessages, ownBody: boolean): OwnWire | undefined {
  const changed = plan.plugins.contextCompression || plan.findings.some((f) => f.action === "redact");
  if (changed && mapped.anthropicOnly.length) throw badRequest(`Invalid body: ${mapped.anthropicOnly.join("; ")}: cannot be carried once the gateway changed the prompt (a guardrail redacted it, or context compression is on)`);
  // The body as the client wrote it: `request` parsed it, and a parse lists keys in the schema's order.
  return ownBody && !changed ? messagesWire(request, req.body as Record<string, unknown>, req.headers) : undefined;
}

/**
 * `POST /messages`: Anthropic's Messages API, as Claude Code and the Anthropic SDK call it. Anthropic
 * endpoints get the client's own body (so its prompt cache matches); the others the translation of its chat
 * form, planned, held, priced and recorded as every dialect is.
 */
export const messagesRoute =
  (deps: InferenceDeps) =>
  async (req: JsonRequest, res: ServerResponse, caller: Caller): Promise<void> => {
    const request = parseInput(messagesRequest, req.body, "body");
    const mapped = toChatRequest(request);
    const ownBody = sendsOwnBody(mapped);
    const cannotCarry = anthropicOnly(mapped, ownBody);
    // The response cache keys on the Anthropic headers too: Anthropic endpoints get them, and a beta changes the answer.
    const client = { body: req.body, headers: anthropicHeaders(req.headers) };
    const plan = await buildPlan(deps, { headers: req.headers, res, caller, dialect: "messages", body: mapped.chat, client, ...(cannotCarry ? { cannotCarry } : {}) });
    // The Anthropic SDK reports this as the request's id (`_request_id`): the generation's.
    res.setHeader("request-id", plan.generationId);
    const own = ownWireFor(plan, request, req, mapped, ownBody);
    // Anthropic endpoints given the client's body apply `thinking.display` themselves; the gateway applies it to
    // the answers it writes, where reasoning has no progress notes for `updates` to keep.
    const display = request.thinking?.type === "disabled" ? undefined : request.thinking?.display;
    const omitThinking = display === "omitted" || display === "updates";
    if (plan.request.stream) await streamed(plan, plan.tools, own, res, omitThinking);
    else await buffered(plan, plan.tools, own, res, omitThinking);
  };
