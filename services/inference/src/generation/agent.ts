import { defaultMaxToolSteps, serverToolCallType, type ServerToolCallDetail } from "@switchyard/contracts";
import { HttpError, metrics, picoToDecimal, picoToUsd } from "@switchyard/runtime";
import { enforceFindings, filterMessages, mergeFindings, type Candidate, type Finding } from "@switchyard/upstream";
import { normalizeFinishReason, type Accounted } from "../accounting.js";
import type { DeclaredTools } from "../tools/declared.js";
import { DetailNumbering, wholeDetails, type Detail } from "../tools/reasoning.js";
import { replayServerCalls } from "../tools/replay.js";
import { runTool, type RunContext, type ToolCall, type ToolRun } from "../tools/run.js";
import { firedCondition } from "../tools/stop.js";
import { Generation } from "./generation.js";
import type { Plan } from "./plan.js";
import type { Completion } from "./parts.js";
import { bufferedTurn, relayTurn, type BufferedTurn, type StreamedTurn, type StreamSink } from "./turns.js";

type Message = Record<string, unknown>;

/** A stream under the loop also shows the server tool calls the gateway ran, after the turn that made them. */
export interface AgentSink extends StreamSink {
  serverCalls(entries: ServerToolCallDetail[], candidate: Candidate): void;
}

/** What the loop needs of a turn, buffered or streamed. */
type LoopTurn = Pick<StreamedTurn, "accounted" | "text" | "toolCalls" | "reasoning" | "reasoningDetails" | "finishReason" | "nativeFinishReason">;

/** What the loop leaves for the dialect to answer with. */
export interface AgentResult {
  /** The generation of the last turn, the one the answer names the endpoint of. */
  generation: Generation;
  buffered?: BufferedTurn;
  streamed?: StreamedTurn;
  /** Usage and cost summed over the turns. */
  total: Accounted;
  /** `usage.server_tool_use_details`. */
  toolUse: { tool_calls_requested: number; tool_calls_executed: number; web_search_requests?: number };
  /** What every turn said, in order (buffered: the answer carries it whole; a stream has sent it). */
  said: { text: string; reasoning: string; details: Detail[] };
  /** The client's own function calls in the last turn. */
  clientCalls: ToolCall[];
  /** The answer's finish: `tool_calls` when the client has calls to make; a server call left in the last turn is not one. */
  finishReason: string | null;
  nativeFinishReason: string | null;
  /** Every server tool call that ran, in order. */
  runs: ToolRun[];
  findings: readonly Finding[];
}

/** Usage and cost summed over the turns of one request. */
function sum(a: Accounted | undefined, b: Accounted): Accounted {
  if (!a) return b;
  const u = (k: keyof Accounted["usage"]) => (a.usage[k] ?? 0) + (b.usage[k] ?? 0);
  const c = (k: keyof Accounted["cost"]) => a.cost[k] + b.cost[k];
  return {
    usage: { promptTokens: u("promptTokens"), completionTokens: u("completionTokens"), cachedTokens: u("cachedTokens"), cacheWriteTokens: u("cacheWriteTokens"), cacheWrite1hTokens: u("cacheWrite1hTokens"), reasoningTokens: u("reasoningTokens"), audioTokens: u("audioTokens"), audioOutputTokens: u("audioOutputTokens") },
    estimated: a.estimated || b.estimated,
    cost: { prompt: c("prompt"), completion: c("completion"), request: c("request"), total: c("total") },
    charge: { charged: a.charge.charged + b.charge.charged, reported: a.charge.reported + b.charge.reported },
    isByok: a.isByok && b.isByok,
    billed: a.billed + b.billed,
  };
}

/** The generation id of turn `step` (from 0): the request's own for the first, `<id>-n` for turn n after it. */
const turnId = (plan: Plan, step: number): string => (step === 0 ? plan.generationId : `${plan.generationId}-${step + 1}`);

/**
 * Each turn is a generation of its own (its own id, hold and record, timed from its own start); the first
 * keeps the request's id and turn n is `<id>-n`, so a client finds every turn from the one id it is given.
 * The last turn after a stop runs with tools disabled so the answer ends in words, not a call.
 */
function turnGeneration(plan: Plan, tools: DeclaredTools, step: number, messages: Message[], toolsOff: boolean, findings: readonly Finding[]): Generation {
  const forcedServer = tools.firstChoice !== plan.request.tool_choice;
  const choice = toolsOff ? "none" : step === 0 ? tools.firstChoice : forcedServer ? "auto" : plan.request.tool_choice;
  const body: Record<string, unknown> = { ...plan.body, messages, tools: tools.upstream };
  if (choice === undefined) delete body.tool_choice;
  else body.tool_choice = choice;
  // The first turn's clock started with the request; a later one's starts now, after the tools ran.
  return new Generation(plan, { id: turnId(plan, step), body, started: step === 0 ? plan.started : performance.now(), findings });
}

function loopTurn(turn: BufferedTurn): LoopTurn {
  const choice = turn.completion.choices[0];
  return {
    accounted: turn.accounted,
    text: choice?.text ?? "",
    toolCalls: (choice?.toolCalls ?? []).filter((c) => c.function.name !== ""),
    reasoning: choice?.reasoning ?? "",
    reasoningDetails: wholeDetails(choice?.reasoningDetails),
    finishReason: normalizeFinishReason(choice?.finishReason),
    nativeFinishReason: choice?.finishReason ?? null,
  };
}

/**
 * The model's turn as the next turn reads it. Its reasoning goes back with it: thinking models refuse a
 * tool call whose thinking (with its signature) is missing from the turn that made it.
 */
const assistantTurn = (turn: LoopTurn, calls: ToolCall[]): Message => ({
  role: "assistant",
  content: turn.text || null,
  tool_calls: calls,
  ...(turn.reasoning ? { reasoning: turn.reasoning } : {}),
  ...(turn.reasoningDetails.length ? { reasoning_details: turn.reasoningDetails } : {}),
});

/** Counts of one request's server tool calls. */
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
    metrics.serverToolCalls.inc({ service: "inference", tool: tool.type, executed: String(run.executed) });
    runs.push(run);
  }
  return runs;
}

/**
 * A guardrail's block of a round's calls or results, told as it is: the matched text never reaches the
 * provider, but the turns before it did and are charged, so the 403 names them and what they cost (the
 * request's `usage.cost`). Other errors pass through unchanged.
 */
function blockedMidLoop(error: unknown, plan: Plan, turns: number, total: Accounted): unknown {
  if (!(error instanceof HttpError) || error.kind !== "forbidden") return error;
  const metadata = error.metadata ?? {};
  const ids = Array.from({ length: turns }, (_, step) => turnId(plan, step));
  const told = turns === 1 ? `the 1 turn before it reached the provider and is charged` : `the ${turns} turns before it reached the provider and are charged`;
  return new HttpError(
    "forbidden",
    `Request blocked by guardrail ${String(metadata.guardrail_id)}: its content filter ${String(metadata.filter)} matched what a server tool brought back (or the model's call to it), so the loop stopped before sending it; ${told} $${picoToDecimal(total.billed)} (generation${turns === 1 ? "" : "s"} ${ids.join(", ")})`,
    { ...metadata, charged_turns: turns, cost: picoToUsd(total.billed), generation_ids: ids },
  );
}

/** The stop condition that fired after a round; undefined when none did. */
function stopFired(plan: Plan, tools: DeclaredTools, turn: LoopTurn, step: number, total: Accounted) {
  const conditions = plan.request.stop_server_tools_when;
  if (!conditions) return undefined;
  return firedCondition(conditions, {
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
  });
}

/**
 * The server-tool loop: the gateway runs the model's calls to server tools, adds the results and calls the
 * model again, until it stops calling them, `max_tool_calls` steps have run, a stop condition fires, or the
 * operator's step limit is reached. Function tools of the client are left for the client. With a `sink`
 * every turn is streamed to it (undefined when a turn failed: the sink has said so); without, each turn is
 * buffered and the result carries what they said.
 */
export function runAgent(plan: Plan, tools: DeclaredTools): Promise<AgentResult & { buffered: BufferedTurn }>;
export function runAgent(plan: Plan, tools: DeclaredTools, sink: AgentSink): Promise<(AgentResult & { streamed: StreamedTurn }) | undefined>;
export async function runAgent(plan: Plan, tools: DeclaredTools, sink?: AgentSink): Promise<AgentResult | undefined> {
  const { request, deps } = plan;
  const conditions = request.stop_server_tools_when;
  // `max_tool_calls` counts agent steps, as OpenRouter defines it; stop conditions, when set, replace it.
  // The operator's SERVER_TOOL_MAX_STEPS bounds both.
  const maxSteps = Math.min(conditions ? Infinity : (request.max_tool_calls ?? defaultMaxToolSteps), deps.maxToolSteps);
  // Calls an earlier answer carried are history the model reads again; they never run again.
  const messages = replayServerCalls((plan.body.messages as Message[] | undefined) ?? []);
  const runContext: RunContext = {
    organizationId: plan.caller.organizationId,
    workspaceId: plan.caller.workspaceId,
    sessionId: plan.sessionId,
    generationId: plan.generationId,
    signal: plan.signal,
    sandbox: deps.sandbox,
    search: deps.search,
    searches: { uses: 0, results: 0 },
    webFetch: deps.webFetch,
    fetches: { uses: 0 },
  };
  const filter = { isServerTool: (name: string) => tools.server.has(name), clientIndex: { next: 0 }, numbering: new DetailNumbering() };
  const said = { text: "", reasoning: "", details: [] as Detail[] };
  const tally: Tally = { requested: 0, executed: 0, steps: 0 };
  const allRuns: ToolRun[] = [];
  let findings = plan.findings;
  let total: Accounted | undefined;
  // No step allowed: the model is asked once, without server tools.
  let toolsOff = maxSteps === 0;
  for (let step = 0; ; step += 1) {
    const generation = turnGeneration(plan, tools, step, messages, toolsOff, findings);
    let turn: LoopTurn;
    let streamed: StreamedTurn | undefined;
    let buffered: BufferedTurn | undefined;
    if (sink) {
      sink.keepAlive(true);
      streamed = await relayTurn(generation, sink, filter);
      // A failure already told the client in-band; the turns before it are recorded.
      if (!streamed || streamed.status !== "completed") return undefined;
      turn = streamed;
    } else {
      buffered = await bufferedTurn(generation);
      turn = loopTurn(buffered);
      said.details.push(...filter.numbering.renumber(turn.reasoningDetails));
    }
    filter.numbering.endTurn();
    said.text += turn.text;
    said.reasoning += turn.reasoning;
    total = sum(total, turn.accounted);
    const serverCalls = turn.toolCalls.filter((c) => tools.server.has(c.function.name));
    const clientCalls = turn.toolCalls.filter((c) => !tools.server.has(c.function.name));
    if (!toolsOff && serverCalls.length > 0) {
      tally.requested += serverCalls.length;
      const fired = stopFired(plan, tools, turn, step, total);
      sink?.keepAlive(true);
      const runs = await runRound(serverCalls, tools, runContext, tally);
      sink?.keepAlive(false);
      allRuns.push(...runs);
      // What the tools brought back is read by the next turn's provider: the guardrails' filters apply to it too.
      // The turn's reasoning goes back to the model that made it within this request: its answer, not the caller's prompt.
      const added = filterMessages(plan.filters, [assistantTurn(turn, serverCalls), ...runs.map((run) => ({ role: "tool", tool_call_id: run.id, content: run.output }))], { skipReasoning: true });
      try {
        enforceFindings(added.findings, plan.dialect, plan.deps.logger);
      } catch (error) {
        const refused = blockedMidLoop(error, plan, step + 1, total);
        // A stream already under way ends with the refusal in-band, as a provider's failure mid-loop does.
        if (!sink?.started || !(refused instanceof HttpError)) throw refused;
        sink.fail(refused.status, refused.message, streamed!.candidate.model, refused.metadata);
        return undefined;
      }
      findings = mergeFindings([[...findings], added.findings]);
      messages.push(...(added.value as Message[]));
      const entries = filter.numbering.serverCalls(runs);
      if (sink) sink.serverCalls(entries, streamed!.candidate);
      else said.details.push(...entries);
      if (fired) deps.logger.debug({ generationId: plan.generationId, condition: fired }, "stop condition fired; one last turn without tools");
      if (clientCalls.length === 0) {
        toolsOff = fired !== undefined || tally.steps >= maxSteps;
        continue;
      }
    }
    // Searches are counted where a search could run: a request without a web search tool has none to count.
    const searched = [...tools.server.values()].some((t) => t.kind === "web_search") ? { web_search_requests: runContext.searches.uses } : {};
    return {
      generation,
      ...(buffered ? { buffered } : {}),
      ...(streamed ? { streamed } : {}),
      total,
      toolUse: { tool_calls_requested: tally.requested, tool_calls_executed: tally.executed, ...searched },
      said,
      clientCalls,
      // The client sees its own calls only; a server call the model made anyway in the last turn is dropped.
      finishReason: clientCalls.length > 0 ? "tool_calls" : turn.finishReason === "tool_calls" ? "stop" : turn.finishReason,
      nativeFinishReason: turn.nativeFinishReason,
      runs: allRuns,
      findings,
    };
  }
}

/** The loop's turns as one answer: every turn's words and reasoning, the client's own calls, the loop's finish. */
export function loopCompletion(result: AgentResult & { buffered: BufferedTurn }): { completion: Completion; serverCalls: ServerToolCallDetail[] } {
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
