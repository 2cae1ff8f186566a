import type { ServerResponse } from "node:http";
import { defaultMaxToolSteps } from "@switchyard/contracts";
import { metrics, sendJson } from "@switchyard/runtime";
import { enforceFindings, filterMessages, mergeFindings } from "@switchyard/upstream";
import { normalizeFinishReason, usageBody, type Accounted } from "../responses.js";
import { sseWriter } from "../sse.js";
import { hidesReasoning, visibleChoices } from "../providers/hide-reasoning.js";
import type { DeclaredTools } from "../tools/declared.js";
import { DetailNumbering, wholeDetails, type Detail } from "../tools/reasoning.js";
import { replayServerCalls } from "../tools/replay.js";
import { runTool, type RunContext, type ToolCall, type ToolRun } from "../tools/run.js";
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
  reasoning: string;
  reasoningDetails: Detail[];
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
    charge: { charged: a.charge.charged + b.charge.charged, reported: a.charge.reported + b.charge.reported },
    isByok: a.isByok && b.isByok,
    billed: a.billed + b.billed,
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
    held: new Map(),
    inFlight: undefined,
    attempts: [],
  };
}

function bufferedLoopTurn(turn: BufferedTurn): Turn {
  const choice = turn.result.choices[0] ?? {};
  const message = (choice.message ?? {}) as { content?: unknown; tool_calls?: unknown; reasoning?: unknown; reasoning_details?: unknown };
  const toolCalls = Array.isArray(message.tool_calls) ? (message.tool_calls as ToolCall[]).filter((c) => typeof c?.function?.name === "string") : [];
  const native = choice.finish_reason === undefined || choice.finish_reason === null ? null : String(choice.finish_reason);
  return {
    accounted: turn.accounted,
    text: typeof message.content === "string" ? message.content : "",
    toolCalls,
    reasoning: typeof message.reasoning === "string" ? message.reasoning : "",
    reasoningDetails: wholeDetails(message.reasoning_details),
    finishReason: normalizeFinishReason(native),
    nativeFinishReason: native,
  };
}

/**
 * The model's turn as the next turn reads it. Its reasoning goes back with it: thinking models refuse a
 * tool call whose thinking (with its signature) is missing from the turn that made it.
 */
const assistantTurn = (turn: Turn, calls: ToolCall[]): Message => ({
  role: "assistant",
  content: turn.text || null,
  tool_calls: calls,
  ...(turn.reasoning ? { reasoning: turn.reasoning } : {}),
  ...(turn.reasoningDetails.length ? { reasoning_details: turn.reasoningDetails } : {}),
});

/** Counts of one request's server tool calls, for `usage.server_tool_use_details`. */
interface Tally {
  /** Calls the model made to server tools (the last turn's, made with tools disabled, are not counted). */
  requested: number;
  /** Calls that ran and produced a result. */
  executed: number;
  /** Agent steps taken: turns whose server tool calls ran. What `max_tool_calls` limits. */
  steps: number;
}

/** Runs one step's calls in order, failed ones included. */
async function runRound(calls: ToolCall[], tools: DeclaredTools, runContext: RunContext, tally: Tally): Promise<ToolRun[]> {
  const runs: ToolRun[] = [];
  tally.steps += 1;
  for (const call of calls) {
    const tool = tools.server.get(call.function.name)!;
    const run = await runTool(call, tool, runContext);
    if (run.executed) tally.executed += 1;
    metrics.serverToolCalls.inc({ tool: tool.type, executed: String(run.executed) });
    runs.push(run);
  }
  return runs;
}

/**
 * A chat completion with server tools: the gateway runs the model's calls to them, adds the results and
 * calls the model again, until it stops calling them, `max_tool_calls` steps have run, a stop condition
 * fires, or the operator's step limit is reached. Function tools of the client are returned to it as usual.
 *
 * The answer says what every turn said, buffered or streamed alike: the words of all turns, their
 * reasoning, and each server tool call with its result as a `reasoning.server_tool_call` entry of
 * `reasoning_details` (the shape `@openrouter/sdk` reads), after the reasoning of the turn that made it.
 */
export async function agentCompletion(context: ChatContext, tools: DeclaredTools, res: ServerResponse): Promise<void> {
  const { request, deps } = context;
  const conditions = request.stop_server_tools_when;
  // `max_tool_calls` counts agent steps, as OpenRouter defines it; stop conditions, when set, replace it.
  // The operator's SERVER_TOOL_MAX_STEPS bounds both.
  const maxSteps = Math.min(conditions ? Infinity : (request.max_tool_calls ?? defaultMaxToolSteps), deps.maxToolSteps);
  // Calls an earlier answer carried are history the model reads again; they never run again.
  const messages = replayServerCalls((context.body.messages as Message[] | undefined) ?? []);
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
  const numbering = new DetailNumbering();
  // What the buffered answer says over all turns; a stream has sent it as it came.
  const said = { text: "", reasoning: "", details: [] as Detail[] };
  const tally: Tally = { requested: 0, executed: 0, steps: 0 };
  let total: Accounted | undefined;
  // No step allowed: the model is asked once, without server tools.
  let toolsOff = maxSteps === 0;
  for (let step = 0; ; step += 1) {
    const turnCtx = turnContext(context, tools, step, messages, toolsOff);
    let turn: Turn;
    let streamedTurn: StreamedTurn | undefined;
    let buffered: BufferedTurn | undefined;
    if (sse) {
      alive!.start();
      streamedTurn = await relayTurn(turnCtx, { sse, created, alive: alive!, filter: { isServerTool: (name) => tools.server.has(name), clientIndex, numbering } });
      // A failure already told the client in-band; the turns before it are recorded.
      if (!streamedTurn || streamedTurn.status !== "completed") return void res.end();
      turn = streamedTurn;
    } else {
      buffered = await bufferedTurn(turnCtx);
      turn = bufferedLoopTurn(buffered);
      said.details.push(...numbering.renumber(turn.reasoningDetails));
    }
    numbering.endTurn();
    said.text += turn.text;
    said.reasoning += turn.reasoning;
    total = sum(total, turn.accounted);
    const serverCalls = turn.toolCalls.filter((c) => tools.server.has(c.function.name));
    const clientCalls = turn.toolCalls.filter((c) => !tools.server.has(c.function.name));
    if (!toolsOff && serverCalls.length > 0) {
      tally.requested += serverCalls.length;
      const fired = conditions
        ? firedCondition(conditions, {
            steps: step + 1,
            costPico: total.charge.charged,
            tokens: total.usage.promptTokens + total.usage.completionTokens,
            calledTools: turn.toolCalls.flatMap((c) => {
              const tool = tools.server.get(c.function.name);
              // A server tool answers to its function name, the type declared and its canonical type.
              return tool ? [c.function.name, tool.type, `openrouter:${tool.kind}`] : [c.function.name];
            }),
            finishReason: turn.finishReason,
            nativeFinishReason: turn.nativeFinishReason,
          })
        : undefined;
      alive?.start();
      const runs = await runRound(serverCalls, tools, runContext, tally);
      alive?.stop();
      // What the tools brought back is read by the next turn's provider: the guardrails' filters apply to it too.
      const added = filterMessages(context.filters, [assistantTurn(turn, serverCalls), ...runs.map((run) => ({ role: "tool", tool_call_id: run.id, content: run.output }))]);
      enforceFindings(added.findings, "chat");
      context.findings = mergeFindings([context.findings, added.findings]);
      messages.push(...(added.value as Message[]));
      const entries = numbering.serverCalls(runs);
      if (!sse) said.details.push(...entries);
      else if (!hidesReasoning(request)) {
        sse.data({ id: context.generationId, object: "chat.completion.chunk", created, model: streamedTurn!.candidate.model, choices: [{ index: 0, delta: { reasoning_details: entries }, finish_reason: null }] });
      }
      if (fired) deps.logger.debug({ generationId: context.generationId, condition: fired }, "stop condition fired; one last turn without tools");
      if (clientCalls.length === 0) {
        toolsOff = fired !== undefined || tally.steps >= maxSteps;
        continue;
      }
    }
    // The answer speaks for the whole request (its id and time) and for the endpoint that gave the last turn.
    const answerCtx: ChatContext = { ...turnCtx, generationId: context.generationId, started: context.started };
    // Searches are counted where a search could run: a request without a web search tool has none to count.
    const searched = [...tools.server.values()].some((t) => t.kind === "web_search") ? { web_search_requests: runContext.searches.uses } : {};
    const details = { tool_calls_requested: tally.requested, tool_calls_executed: tally.executed, ...searched };
    const usage = { ...usageBody(total), server_tool_use_details: details };
    // The client sees its own calls only; a server call the model made anyway in the last turn is dropped.
    const finishReason = clientCalls.length > 0 ? "tool_calls" : turn.finishReason === "tool_calls" ? "stop" : turn.finishReason;
    if (sse) {
      sse.data({ id: context.generationId, object: "chat.completion.chunk", created, model: streamedTurn!.candidate.model, choices: [{ index: 0, delta: {}, finish_reason: finishReason ?? "stop", native_finish_reason: turn.nativeFinishReason }] });
      closeStream(answerCtx, sse, streamedTurn!, created, usage);
      return void res.end();
    }
    const answer = bufferedAnswer(answerCtx, buffered!, usage);
    for (const [i, choice] of answer.choices.entries()) {
      const message = choice.message as Message & { tool_calls?: ToolCall[] };
      if (i === 0) {
        if (said.text) message.content = said.text;
        if (said.reasoning) message.reasoning = said.reasoning;
        if (said.details.length) message.reasoning_details = said.details;
      }
      if (!Array.isArray(message.tool_calls)) continue;
      const own = message.tool_calls.filter((c) => !tools.server.has(c.function?.name));
      if (own.length > 0) message.tool_calls = own;
      else delete message.tool_calls;
      if (own.length === 0 && choice.finish_reason === "tool_calls") choice.finish_reason = "stop";
    }
    sendJson(res, 200, { ...answer, choices: visibleChoices(request, answer.choices) });
    return;
  }
}
