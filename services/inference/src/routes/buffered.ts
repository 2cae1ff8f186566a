import type { ServerResponse } from "node:http";
import { sendJson } from "@switchyard/runtime";
import { visibleChoices } from "../providers/hide-reasoning.js";
import { healJson } from "../plugins.js";
import type { UpstreamCompletion } from "../providers/types.js";
import { normalizeFinishReason, usageBody, type Accounted } from "../responses.js";
import type { Candidate } from "@switchyard/upstream";
import { accepted, type ChatContext } from "./chat-completions.js";
import { accountAbandoned, finish, metadataFor } from "./finish.js";

const wantsJson = (context: ChatContext) => {
  const format = context.request.response_format as { type?: string } | undefined;
  return format?.type === "json_object" || format?.type === "json_schema";
};

/** Response healing: a JSON answer that does not parse is repaired in place when it can be. */
function healChoices(choices: Array<Record<string, unknown>>) {
  for (const choice of choices) {
    const message = choice.message as { content?: unknown } | undefined;
    if (message && typeof message.content === "string") message.content = healJson(message.content) ?? message.content;
  }
}

const textOf = (choice: Record<string, unknown>) => {
  const content = (choice.message as { content?: unknown } | undefined)?.content;
  return typeof content === "string" ? content : "";
};

export interface BufferedTurn {
  result: UpstreamCompletion;
  candidate: Candidate;
  accounted: Accounted;
}

/** One provider call, answered whole, priced and recorded. */
export async function bufferedTurn(context: ChatContext): Promise<BufferedTurn> {
  let attempt;
  try {
    attempt = await accepted(context, (provider, target, body, { signal }) => provider.complete(body, target, signal));
  } catch (error) {
    accountAbandoned(context);
    throw error;
  }
  const { result, candidate } = attempt;
  if (context.plugins.responseHealing && wantsJson(context)) healChoices(result.choices);
  const first = result.choices[0];
  const accounted = finish(context, {
    candidate,
    status: "completed",
    usage: result.usage,
    completionText: result.choices.map(textOf).join(""),
    reasoningText: result.choices.map((c) => String((c.message as { reasoning?: unknown } | undefined)?.reasoning ?? "")).join(""),
    upstreamId: result.id,
    finishReason: normalizeFinishReason(first?.finish_reason),
    nativeFinishReason: first?.finish_reason === undefined || first.finish_reason === null ? null : String(first.finish_reason),
    serviceTier: result.serviceTier,
    firstTokenMs: null,
  });
  return { result, candidate, accounted };
}

/** The answer: the upstream completion with our id, the serving model and priced usage. */
export function bufferedAnswer(context: ChatContext, turn: BufferedTurn, usage = usageBody(turn.accounted), extra: Record<string, unknown> = {}) {
  const { result, candidate } = turn;
  return {
    id: context.generationId,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: candidate.model,
    system_fingerprint: result.systemFingerprint,
    service_tier: result.serviceTier,
    choices: result.choices.map((choice, i) => {
      const message = (choice.message ?? {}) as Record<string, unknown>;
      return {
        ...choice,
        index: typeof choice.index === "number" ? choice.index : i,
        finish_reason: normalizeFinishReason(choice.finish_reason) ?? "stop",
        native_finish_reason: choice.finish_reason ?? null,
        message: { ...message, role: "assistant", content: typeof message.content === "string" ? message.content : null },
      };
    }),
    usage,
    ...metadataFor(context, candidate),
    ...extra,
  };
}

/** A non-streaming completion without server tools. */
export async function bufferedCompletion(context: ChatContext, res: ServerResponse): Promise<void> {
  const answer = bufferedAnswer(context, await bufferedTurn(context));
  sendJson(res, 200, { ...answer, choices: visibleChoices(context.request, answer.choices) });
}
