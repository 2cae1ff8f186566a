import { sendJson, type Caller } from "@switchyard/runtime";
import type { IncomingHttpHeaders, ServerResponse } from "node:http";
import type { InferenceDeps } from "../../deps.js";
import { runAgent } from "../../generation/agent.js";
import { planGeneration } from "../../generation/generation.js";
import { buildPlan, type Plan } from "../../generation/plan.js";
import { bufferedTurn, relayTurn } from "../../generation/turns.js";
import { usageBody } from "../../accounting.js";
import type { DeclaredTools } from "../../tools/declared.js";
import { agentAnswer, agentUsage, plainAnswer } from "./answer.js";
import { ChatStream } from "./stream.js";

/** What a route reads of a request: its headers and its JSON body. */
export interface JsonRequest {
  headers: IncomingHttpHeaders;
  body: unknown;
}

/** A streamed completion without server tools: one relayed turn. */
async function streamed(plan: Plan, res: ServerResponse) {
  const sink = new ChatStream(plan, res, false);
  sink.keepAlive(true);
  const generation = planGeneration(plan);
  const turn = await relayTurn(generation, sink);
  if (turn?.status === "completed") sink.close(turn.candidate, usageBody(turn.accounted), generation.metadata(turn.candidate, plan.findings));
  sink.end();
}

/** A completion with server tools, buffered or streamed. */
async function withServerTools(plan: Plan, tools: DeclaredTools, res: ServerResponse) {
  const isServerTool = (name: string) => tools.server.has(name);
  if (!plan.request.stream) {
    return void sendJson(res, 200, agentAnswer(await runAgent(plan, tools), isServerTool));
  }
  const sink = new ChatStream(plan, res, true);
  const result = await runAgent(plan, tools, sink);
  if (result) {
    const { candidate } = result.streamed;
    sink.finish(candidate, result.finishReason, result.nativeFinishReason);
    sink.close(candidate, agentUsage(result), result.generation.metadata(candidate, result.findings, plan.started));
  }
  sink.end();
}

/** `POST /chat/completions`: plan the request, run it, answer in Chat Completions' shape. */
export const chatCompletionsRoute =
  (deps: InferenceDeps) =>
  async (req: JsonRequest, res: ServerResponse, caller: Caller): Promise<void> => {
    const plan = await buildPlan(deps, { headers: req.headers, res, caller, dialect: "chat", body: req.body });
    if (plan.tools) await withServerTools(plan, plan.tools, res);
    else if (plan.request.stream) await streamed(plan, res);
    else {
      const generation = planGeneration(plan);
      sendJson(res, 200, plainAnswer(generation, await bufferedTurn(generation)));
    }
  };
