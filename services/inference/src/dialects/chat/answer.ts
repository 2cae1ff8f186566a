import type { ChatUsage } from "@switchyard/contracts";
import { extended } from "@switchyard/runtime";
import type { Finding } from "@switchyard/upstream";
import type { AgentResult } from "../../generation/agent.js";
import type { Generation } from "../../generation/generation.js";
import type { CompletionChoice } from "../../generation/parts.js";
import type { BufferedTurn } from "../../generation/turns.js";
import { visibleChoices } from "../../providers/hide-reasoning.js";
import { normalizeFinishReason, usageBody } from "../../accounting.js";

/** One choice's message as Chat Completions answers it: the provider's own fields, then what the gateway read. */
function message(choice: CompletionChoice): Record<string, unknown> {
  return extended(choice.fields, {
    role: "assistant",
    content: choice.text,
    ...(choice.reasoning !== null ? { reasoning: choice.reasoning } : {}),
    ...(choice.reasoningDetails.length ? { reasoning_details: choice.reasoningDetails } : {}),
    ...(choice.toolCalls.length ? { tool_calls: choice.toolCalls } : {}),
  });
}

/** The `chat.completion` of a buffered turn: our id, the serving model, priced usage, metadata when asked. */
export function chatAnswer(generation: Generation, turn: BufferedTurn, usage: ChatUsage, findings: readonly Finding[], started = generation.turn.started) {
  const { completion, candidate } = turn;
  return {
    id: generation.plan.generationId,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: candidate.model,
    system_fingerprint: completion.systemFingerprint,
    service_tier: completion.serviceTier,
    choices: completion.choices.map((choice) =>
      extended(choice.choiceFields, {
        index: choice.index,
        finish_reason: normalizeFinishReason(choice.finishReason) ?? "stop",
        native_finish_reason: choice.finishReason,
        message: message(choice),
      }),
    ),
    usage,
    ...generation.metadata(candidate, findings, started),
  };
}

/** A buffered completion without server tools. */
export function plainAnswer(generation: Generation, turn: BufferedTurn) {
  const answer = chatAnswer(generation, turn, usageBody(turn.accounted), generation.turn.findings);
  return { ...answer, choices: visibleChoices(generation.plan.request, answer.choices) };
}

/** The usage of the server-tool loop: every turn's together, and the server tools it ran. */
export const agentUsage = (result: Pick<AgentResult, "total" | "toolUse">) => extended(usageBody(result.total), { server_tool_use_details: result.toolUse });

/**
 * The answer of the server-tool loop says what every turn said: the words of all turns, their reasoning, and
 * each server tool call with its result as a `reasoning.server_tool_call` entry of `reasoning_details` (the
 * shape `@openrouter/sdk` reads), after the reasoning of the turn that made it. The client sees its own calls only.
 */
export function agentAnswer(result: AgentResult & { buffered: BufferedTurn }, isServerTool: (name: string) => boolean) {
  const { generation, said } = result;
  const usage = agentUsage(result);
  // The answer speaks for the whole request (its id and time) and for the endpoint that gave the last turn.
  const answer = chatAnswer(generation, result.buffered, usage, result.findings, generation.plan.started);
  for (const [i, choice] of answer.choices.entries()) {
    const msg = choice.message as Record<string, unknown> & { tool_calls?: CompletionChoice["toolCalls"] };
    if (i === 0) {
      if (said.text) msg.content = said.text;
      if (said.reasoning) msg.reasoning = said.reasoning;
      if (said.details.length) msg.reasoning_details = said.details;
    }
    if (!Array.isArray(msg.tool_calls)) continue;
    const own = msg.tool_calls.filter((c) => !isServerTool(c.function.name));
    if (own.length > 0) msg.tool_calls = own;
    else delete msg.tool_calls;
    if (own.length === 0 && choice.finish_reason === "tool_calls") choice.finish_reason = "stop";
  }
  return { ...answer, choices: visibleChoices(generation.plan.request, answer.choices) };
}

