import type { Response } from "express";
import { metrics } from "@switchyard/runtime";
import { normalizeFinishReason, usageBody, type Accounted } from "../responses.js";
import { sseWriter } from "../sse.js";
import type { DeclaredTools } from "../tools/declared.js";
import { failedRun, runTool, type RunContext, type ToolCall, type ToolRun } from "../tools/run.js";
import { firedCondition } from "../tools/stop.js";
import { bufferedAnswer, bufferedTurn, type BufferedTurn } from "./buffered.js";
import type { ChatContext } from "./chat-completions.js";
import { closeStream, keepAlive, relayTurn, type StreamedTurn } from "./streamed.js";

type Message = Record<string, unknown>;

/** What the loop needs of a turn, buffered or streamed. */
interface Turn {
  accounted: Accounted;
  text: string;
  toolCalls: ToolCall[];
  finishReason: string | null;
  nativeFinishReason: string | null;
}

/** Usage and cost summed over the turns of one request. */
function sum(a: Accounted | undefined, b: Accounted): Accounted {
  if (!a) return b;
  const u = (k: keyof Accounted["usage"]) => a.usage[k] + b.usage[k];
  const c = (k: keyof Accounted["cost"]) => a.cost[k] + b.cost[k];
  return {
    usage: { promptTokens: u("promptTokens"), completionTokens: u("completionTokens"), cachedTokens: u("cachedTokens"), cacheWriteTokens: u("cacheWriteTokens"), reasoningTokens: u("reasoningTokens") },
    estimated: a.estimated || b.estimated,
    cost: { prompt: c("prompt"), completion: c("completion"), request: c("request"), total: c("total") },
  };
}

/**
 * Each turn is a generation of its own (its own id, hold and record, timed from its own start); the first
 * keeps the request's id and turn n is `<id>-n`, so a client finds every turn from the one id it is given.
 * The last turn after a stop runs with tools disabled so the answer ends in words, not a call.
 */
function turnContext(context: ChatContext, tools: DeclaredTools, step: number, messages: Message[], toolsOff: boolean): ChatContext {
  const forcedServer = tools.firstChoice !== context.request.tool_choice;
  const choice = toolsOff ? "none" : step === 0 ? tools.firstChoice : forcedServer ? "auto" : context.request.tool_choice;
  const body: Record<string, unknown> = { ...context.body, messages, tools: tools.upstream };
  if (choice === undefined) delete body.tool_choice;
  else body.tool_choice = choice;
  return {
    ...context,
    generationId: step === 0 ? context.generationId : `${context.generationId}-${step + 1}`,
    // The first turn's clock started with the request; a later one's starts now, after the tools ran.
    started: step === 0 ? context.started : performance.now(),
    body,
    dropped: new Map(),
    sentBody: new Map(),
    inFlight: undefined,
    attempts: [],
  };
}

function bufferedLoopTurn(turn: BufferedTurn): Turn {
  const choice = turn.result.choices[0] ?? {};
  const message = (choice.message ?? {}) as { content?: unknown; tool_calls?: unknown };
  const toolCalls = Array.isArray(message.tool_calls) ? (message.tool_calls as ToolCall[]).filter((c) => typeof c?.function?.name === "string") : [];
  const native = choice.finish_reason === undefined || choice.finish_reason === null ? null : String(choice.finish_reason);
  return { accounted: turn.accounted, text: typeof message.content === "string" ? message.content : "", toolCalls, finishReason: normalizeFinishReason(native), nativeFinishReason: native };
}

/**
 * A chat completion with server tools: the gateway runs the model's calls to them, adds the results and
 * calls the model again, until it stops calling them, `max_tool_calls` is reached, a stop condition fires,
 * or the operator's step limit is reached. Function tools of the client are returned to it as usual.
 */
export async function agentCompletion(context: ChatContext, tools: DeclaredTools, res: Response): Promise<void> {
  const { request, deps } = context;
  const conditions = request.stop_server_tools_when;
  // Stop conditions, when set, replace max_tool_calls.
  const maxCalls = conditions ? Infinity : (request.max_tool_calls ?? Infinity);
  const messages = [...((context.body.messages as Message[] | undefined) ?? [])];
  const runs: ToolRun[] = [];
  const runContext: RunContext = {
    organizationId: context.caller.organizationId,
    workspaceId: context.caller.workspaceId,
    sessionId: context.sessionId,
    generationId: context.generationId,
    signal: context.signal,
    sandbox: deps.sandbox,
    search: deps.search,
    searches: { uses: 0, results: 0 },
  };
  const streamed = request.stream === true;
  const sse = streamed ? sseWriter(res, { "x-generation-id": context.generationId }) : undefined;
  const alive = sse ? keepAlive(sse) : undefined;
  const created = Math.floor(Date.now() / 1000);
  const clientIndex = { next: 0 };
  let total: Accounted | undefined;
  let requested = 0;
  let attempted = 0;
  let executed = 0;
  let toolsOff = false;
  for (let step = 0; ; step += 1) {
    const turnCtx = turnContext(context, tools, step, messages, toolsOff);
    let turn: Turn;
    let streamedTurn: StreamedTurn | undefined;
    let buffered: BufferedTurn | undefined;
    if (sse) {
      alive!.start();
      streamedTurn = await relayTurn(turnCtx, { sse, created, alive: alive!, filter: { isServerTool: (name) => tools.server.has(name), clientIndex } });
      // A failure already told the client in-band; the turns before it are recorded.
      if (!streamedTurn || streamedTurn.status !== "completed") return void res.end();
      turn = streamedTurn;
    } else {
      buffered = await bufferedTurn(turnCtx);
      turn = bufferedLoopTurn(buffered);
    }
    total = sum(total, turn.accounted);
    const serverCalls = turn.toolCalls.filter((c) => tools.server.has(c.function.name));
    const clientCalls = turn.toolCalls.filter((c) => !tools.server.has(c.function.name));
    if (!toolsOff && serverCalls.length > 0) {
      requested += serverCalls.length;
      const fired = conditions
        ? firedCondition(conditions, {
            steps: step + 1,
            costPico: total.cost.total,
            tokens: total.usage.promptTokens + total.usage.completionTokens,
            calledTools: turn.toolCalls.flatMap((c) => [c.function.name, tools.server.get(c.function.name)?.type ?? c.function.name]),
            finishReason: turn.finishReason,
            nativeFinishReason: turn.nativeFinishReason,
          })
        : undefined;
      alive?.start();
      const turnRuns: ToolRun[] = [];
      for (const call of serverCalls) {
        const tool = tools.server.get(call.function.name)!;
        let run: ToolRun;
        // Every call the gateway attempts uses the budget, failed ones too: a tool that keeps failing
        // would otherwise run the loop to the operator's step limit, each turn charged.
        if (attempted >= maxCalls) run = failedRun(call, tool, `Not run: the request's max_tool_calls (${maxCalls}) is reached`);
        else {
          attempted += 1;
          run = await runTool(call, tool, runContext);
        }
        if (run.executed) executed += 1;
        metrics.serverToolCalls.inc({ tool: tool.type, executed: String(run.executed) });
        turnRuns.push(run);
      }
      alive?.stop();
      runs.push(...turnRuns);
      messages.push({ role: "assistant", content: turn.text || null, tool_calls: serverCalls });
      for (const run of turnRuns) messages.push({ role: "tool", tool_call_id: run.id, content: run.output });
      sse?.data({ id: context.generationId, object: "chat.completion.chunk", created, model: context.requested, choices: [], server_tool_calls: turnRuns });
      if (fired) deps.logger.debug({ generationId: context.generationId, condition: fired }, "stop condition fired; one last turn without tools");
      if (clientCalls.length === 0) {
        toolsOff = fired !== undefined || attempted >= maxCalls || step + 1 >= deps.maxToolSteps;
        continue;
      }
    }
    // The answer speaks for the whole request (its id and time) and for the endpoint that gave the last turn.
    const answerCtx: ChatContext = { ...turnCtx, generationId: context.generationId, started: context.started };
    const usage = { ...usageBody(total), server_tool_use_details: { tool_calls_requested: requested, tool_calls_executed: executed } };
    // The client sees its own calls only; a server call the model made anyway in the last turn is dropped.
    const finishReason = clientCalls.length > 0 ? "tool_calls" : turn.finishReason === "tool_calls" ? "stop" : turn.finishReason;
    if (sse) {
      sse.data({ id: context.generationId, object: "chat.completion.chunk", created, model: streamedTurn!.candidate.model, choices: [{ index: 0, delta: {}, finish_reason: finishReason ?? "stop", native_finish_reason: turn.nativeFinishReason }] });
      closeStream(answerCtx, sse, streamedTurn!, created, usage);
      return void res.end();
    }
    const answer = bufferedAnswer(answerCtx, buffered!, usage, { server_tool_calls: runs });
    for (const choice of answer.choices) {
      const message = choice.message as Message & { tool_calls?: ToolCall[] };
      if (!Array.isArray(message.tool_calls)) continue;
      const own = message.tool_calls.filter((c) => !tools.server.has(c.function?.name));
      if (own.length > 0) message.tool_calls = own;
      else delete message.tool_calls;
      if (own.length === 0 && choice.finish_reason === "tool_calls") choice.finish_reason = "stop";
    }
    res.json(answer);
    return;
  }
}
