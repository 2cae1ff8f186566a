import { responsesRequest, type ResponsesRequest } from "@switchyard/contracts";
import { parseInput, sendJson, type Caller } from "@switchyard/runtime";
import type { Candidate } from "@switchyard/upstream";
import type { ServerResponse } from "node:http";
import type { InferenceDeps } from "../../deps.js";
import { loopCompletion, runAgent } from "../../generation/agent.js";
import { planGeneration } from "../../generation/generation.js";
import { buildPlan, type Plan } from "../../generation/plan.js";
import { bufferedTurn, relayTurn } from "../../generation/turns.js";
import { hasOwnApi, wireFor } from "../../routing/attempts.js";
import type { DeclaredTools } from "../../tools/declared.js";
import type { JsonRequest } from "../chat/route.js";
import { EventStream } from "../event-stream.js";
import { responseBody, responseFrame } from "./answer.js";
import { ResponsesEvents } from "./events.js";
import { checkToolChoice, holdsImageByFileId, toChatRequest } from "./request.js";

/** A streamed response: the Responses API's named events, each with its sequence number. */
class ResponsesStream extends EventStream<ResponsesEvents> {
  constructor(
    private readonly plan: Plan,
    private readonly request: ResponsesRequest,
    res: ServerResponse,
  ) {
    super(res, plan.generationId);
  }

  protected begin(model: string): ResponsesEvents {
    return new ResponsesEvents((event) => this.sse.event(event.type, event), responseFrame(this.request, this.plan.generationId, this.created, model));
  }

  finish(candidate: Candidate, ...args: Parameters<ResponsesEvents["finish"]>): void {
    this.events(candidate.model).finish(...args);
  }
}

/** A buffered response, with or without server tools. */
async function buffered(plan: Plan, request: ResponsesRequest, tools: DeclaredTools | undefined, res: ServerResponse) {
  const created = Math.floor(Date.now() / 1000);
  if (tools) {
    const result = await runAgent(plan, tools);
    const { completion, serverCalls } = loopCompletion(result);
    const frame = responseFrame(request, plan.generationId, created, result.buffered.candidate.model);
    return void sendJson(res, 200, responseBody({ frame, completion, accounted: result.total, serverCalls, toolUse: result.toolUse }));
  }
  const turn = await bufferedTurn(planGeneration(plan));
  const frame = responseFrame(request, plan.generationId, created, turn.candidate.model);
  sendJson(res, 200, responseBody({ frame, completion: turn.completion, accounted: turn.accounted }));
}

/** A streamed response, with or without server tools. */
async function streamed(plan: Plan, request: ResponsesRequest, tools: DeclaredTools | undefined, res: ServerResponse) {
  const sink = new ResponsesStream(plan, request, res);
  if (tools) {
    const result = await runAgent(plan, tools, sink);
    if (result) sink.finish(result.streamed.candidate, result.total, result.finishReason, result.toolUse);
    return void res.end();
  }
  sink.keepAlive(true);
  const turn = await relayTurn(planGeneration(plan), sink);
  if (turn?.status === "completed") sink.finish(turn.candidate, turn.accounted, turn.finishReason);
  res.end();
}

/** Endpoints other than OpenAI's Responses API cannot take an image given by file id. */
function imagesByFileId(chat: Record<string, unknown>) {
  const refusal = "input_image by file_id: only OpenAI's Responses API takes an image by its file id; send image_url instead";
  return (candidate: Candidate) => (hasOwnApi("responses", candidate.endpoint.adapter) && wireFor("responses", chat) === "responses" ? undefined : refusal);
}

/**
 * `POST /responses`: the OpenAI Responses API as OpenRouter serves it, stateless. The request is normalised to
 * a chat request and planned as every dialect is; OpenAI's own endpoints get their Responses API, others the
 * translation to their wire format.
 */
export const responsesRoute =
  (deps: InferenceDeps) =>
  async (req: JsonRequest, res: ServerResponse, caller: Caller): Promise<void> => {
    const request = parseInput(responsesRequest, req.body, "body");
    const { chat } = toChatRequest(request);
    const cannotCarry = holdsImageByFileId(chat.messages) ? imagesByFileId(chat) : undefined;
    const plan = await buildPlan(deps, { headers: req.headers, res, caller, dialect: "responses", body: chat, client: req.body, check: checkToolChoice, ...(cannotCarry ? { cannotCarry } : {}) });
    if (plan.request.stream) await streamed(plan, request, plan.tools, res);
    else await buffered(plan, request, plan.tools, res);
  };
