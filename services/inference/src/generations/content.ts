import type { GenerationContent } from "@switchyard/contracts";
import type { ChatContext } from "../routes/chat-completions.js";
import type { Outcome } from "../routes/finish.js";

/**
 * Input/output logging: a workspace that turned it on keeps, for the share of generations it sampled, what
 * the provider was sent (after the guardrails' content filters) and what it answered, in storage for its
 * retention. Handed over after the answer, off the request's path: a failure to keep it is logged, never
 * the caller's problem.
 */
export function keepContent(context: ChatContext, outcome: Outcome): void {
  if (!context.logContent || outcome.status === "cancelled") return;
  const failed = context.attempts.filter((a) => a.status !== 200);
  const content: GenerationContent = {
    input: { messages: Array.isArray(context.body.messages) ? context.body.messages : [] },
    output: { completion: outcome.completionText || null, reasoning: outcome.reasoningText || null },
    error:
      outcome.status === "error"
        ? {
            message: "The provider's stream failed after its first byte",
            status: null,
            provider_name: outcome.candidate.endpoint.provider,
            raw: null,
            previous_errors: failed.map((a) => ({ code: a.status ?? 0, message: a.error ?? "", provider_name: a.provider, raw: null })),
          }
        : null,
  };
  const { caller, deps, generationId } = context;
  deps.content
    .save({ generation_id: generationId, organization_id: caller.organizationId, workspace_id: caller.workspaceId, content })
    .catch((error: unknown) => deps.logger.warn({ err: error, generationId }, "could not keep the generation's content for input/output logging"));
}
