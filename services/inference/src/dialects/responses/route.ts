import { responsesRequest, serverToolCallType, type ResponsesRequest, type ServerToolCallDetail } from "@switchyard/contracts";
import { parseInput, sendJson, type Caller } from "@switchyard/runtime";
import type { Candidate } from "@switchyard/upstream";
import type { ServerResponse } from "node:http";
import type { InferenceDeps } from "../../deps.js";
import { runAgent, type AgentResult, type AgentSink } from "../../generation/agent.js";
import { planGeneration, type Generation } from "../../generation/generation.js";
import type { Completion, PartBatch } from "../../generation/parts.js";
import { buildPlan, type Plan } from "../../generation/plan.js";
import { bufferedTurn, relayTurn, type BufferedTurn } from "../../generation/turns.js";
import { SseStream } from "../../sse.js";
import type { DeclaredTools } from "../../tools/declared.js";
import type { JsonRequest } from "../chat/route.js";
import { responseBody, responseFrame } from "./answer.js";
import { ResponsesEvents } from "./events.js";
import { toChatRequest } from "./request.js";

/**
 * A streamed response: the Responses API's named events, each with its sequence number. The events start
 * once an endpoint has accepted (the first names the model that serves); a failure before that is a plain
 * HTTP error, unless keep-alive comments already began the stream.
 */
class ResponsesStream extends SseStream implements AgentSink {
  private events: ResponsesEvents | undefined;

  constructor(
    private readonly plan: Plan,
    private readonly request: ResponsesRequest,
    res: ServerResponse,
  ) {
    super(res, plan.generationId);
  }

  /** The events of this response, begun for the model that serves (or was asked for, when none did). */
  private opened(model: string): ResponsesEvents {
    if (!this.events) {
      this.events = new ResponsesEvents((event) => this.sse.event(event.type, event), responseFrame(this.request, this.plan.generationId, this.created, model));
      this.events.start();
    }
    return this.events;
  }

  accepted(_generation: Generation, candidate: Candidate): void {
    this.opened(candidate.model);
  }

  parts(batch: PartBatch, candidate: Candidate): void {
    this.opened(candidate.model).push(batch);
  }

  serverCalls(entries: ServerToolCallDetail[], candidate: Candidate): void {
    const events = this.opened(candidate.model);
    for (const entry of entries) events.serverCall(entry);
  }

  fail(code: number, message: string, model: string): void {
    this.opened(model).fail(code, message);
  }

  finish(candidate: Candidate, ...args: Parameters<ResponsesEvents["finish"]>): void {
    this.opened(candidate.model).finish(...args);
  }
}

/** The loop's turns as one answer: every turn's words and reasoning, the client's own calls, the loop's finish. */
function loopCompletion(result: AgentResult & { buffered: BufferedTurn }): { completion: Completion; serverCalls: ServerToolCallDetail[] } {
  const { completion } = result.buffered;
  const last = completion.choices[0];
  const serverCalls = result.said.details.filter((d): d is typeof d & ServerToolCallDetail => d.type === serverToolCallType);
  const choice = {
    index: 0,
    text: result.said.text || last?.text || null,
    reasoning: result.said.reasoning || null,
    reasoningDetails: result.said.details.filter((d) => d.type !== serverToolCallType),
    toolCalls: result.clientCalls,
    finishReason: result.finishReason,
    fields: last?.fields ?? {},
    choiceFields: last?.choiceFields ?? {},
  };
  return { completion: { ...completion, choices: [choice] }, serverCalls };
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

/**
 * `POST /responses`: the OpenAI Responses API as OpenRouter serves it, stateless. The request is normalised to
 * a chat request and planned as every dialect is; OpenAI's own endpoints get their Responses API, others the
 * translation to their wire format.
 */
export const responsesRoute =
  (deps: InferenceDeps) =>
  async (req: JsonRequest, res: ServerResponse, caller: Caller): Promise<void> => {
    const request = parseInput(responsesRequest, req.body, "body");
    const plan = await buildPlan(deps, { headers: req.headers, res, caller, dialect: "responses", body: toChatRequest(request).chat });
    if (plan.request.stream) await streamed(plan, request, plan.tools, res);
    else await buffered(plan, request, plan.tools, res);
  };
