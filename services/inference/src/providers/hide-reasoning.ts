import type { ChatCompletionRequest } from "@switchyard/contracts";

/** `reasoning.exclude: true` or the legacy `include_reasoning: false`: the model may reason, the answer does not show it. */
export const hidesReasoning = (request: ChatCompletionRequest): boolean => request.reasoning?.exclude === true || request.include_reasoning === false;

const reasoningFields = ["reasoning", "reasoning_content", "reasoning_details"];

function withoutReasoning(choice: Record<string, unknown>): Record<string, unknown> {
  let out = choice;
  for (const part of ["message", "delta"]) {
    const inner = choice[part] as Record<string, unknown> | undefined;
    if (!inner || !reasoningFields.some((f) => f in inner)) continue;
    const kept = { ...inner };
    for (const f of reasoningFields) delete kept[f];
    out = { ...out, [part]: kept };
  }
  return out;
}

/**
 * The choices of an answer or a chunk as the caller may see them: without reasoning when the request hides
 * it. Applied where answers are written, so it holds for every adapter, buffered and streamed, while the
 * agent loop still hands each turn's reasoning back to the provider that needs it. Reasoning tokens stay
 * in the usage: they were produced, and are paid for.
 */
export function visibleChoices<C extends Record<string, unknown>>(request: ChatCompletionRequest, choices: C[]): C[] {
  return hidesReasoning(request) ? (choices.map(withoutReasoning) as C[]) : choices;
}
