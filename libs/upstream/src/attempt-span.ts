import { currentSpan, keepAccepted, takeAccepted, withSpan, type GenerationOperation, type Span } from "@switchyard/runtime";
import type { AttemptSignal } from "./attempt-timeouts.js";
import type { Candidate } from "./candidates.js";
import { UpstreamError } from "./errors.js";
import type { UpstreamTarget } from "./attempts.js";

type AttemptCall<P, T> = (provider: P, target: UpstreamTarget, candidate: Candidate, attempt: AttemptSignal) => Promise<T>;

/** The GenAI semantic conventions' attributes of one attempt, known before it is sent. */
function describe(span: Span, operation: GenerationOperation, target: UpstreamTarget, candidate: Candidate): void {
  span
    .set("gen_ai.operation.name", operation)
    .set("gen_ai.provider.name", target.provider)
    .set("gen_ai.system", target.provider)
    .set("gen_ai.request.model", target.upstreamModel)
    .set("switchyard.model", candidate.model)
    .set("switchyard.byok", candidate.byokKey !== undefined);
  try {
    const url = new URL(target.baseUrl);
    span.set("server.address", url.hostname).set("server.port", Number(url.port || (url.protocol === "https:" ? 443 : 80)));
  } catch {
    // A base URL the catalog let through but URL cannot read names no server; the attempt itself will say so.
  }
}

/** Why an attempt failed, in words that carry no provider text (which may quote what was sent). */
function failure(span: Span, error: unknown, attempt: AttemptSignal): string {
  if (attempt.timedOut()) {
    span.set("error.type", "timeout");
    return "no first byte within the timeout";
  }
  if (error instanceof UpstreamError && error.status !== null) {
    span.set("http.response.status_code", error.status).set("error.type", String(error.status));
    return `the provider answered ${error.status}`;
  }
  if (attempt.signal.aborted) {
    span.set("error.type", "cancelled");
    return "cancelled";
  }
  const type = error instanceof UpstreamError ? "unreachable" : error instanceof Error ? error.name : "error";
  span.set("error.type", type);
  return type;
}

/**
 * `call` with one CLIENT span per attempt, child of the request's span, current while the attempt runs so
 * that the provider request carries its `traceparent`. A failed attempt's span ends with the failure; an
 * accepted one stays open until its generation is recorded with its usage (`endAttemptSpan`), or the request
 * ends. Outside a traced request (tracing off) `call` is returned as it is.
 */
export function tracedAttempts<P, T>(call: AttemptCall<P, T>, operation: GenerationOperation = "chat"): AttemptCall<P, T> {
  const parent = currentSpan();
  if (!parent) return call;
  return (provider, target, candidate, attempt) => {
    const span = parent.child(`${operation} ${target.upstreamModel}`, "client");
    if (span.recording) describe(span, operation, target, candidate);
    return withSpan(span, () => call(provider, target, candidate, attempt)).then(
      (result) => {
        span.set("http.response.status_code", 200);
        keepAccepted(span);
        return result;
      },
      (error: unknown) => {
        span.end(failure(span, error, attempt));
        throw error;
      },
    );
  };
}

/** How a generation ended, as its provider said: for its attempt's span. */
export interface AttemptAnswer {
  /** The provider's id of its answer. */
  id?: string | null;
  finishReason?: string | null;
  /** `error`: the answer failed after its first byte. */
  status?: "completed" | "error" | "cancelled";
}

/** Ends the request's accepted attempt span with what its generation used and how it ended. */
export function endAttemptSpan(generationId: string, usage: { promptTokens: number; completionTokens?: number }, answer: AttemptAnswer = {}): void {
  const span = takeAccepted();
  if (!span) return;
  span
    .set("gen_ai.usage.input_tokens", usage.promptTokens)
    .set("gen_ai.usage.output_tokens", usage.completionTokens)
    .set("gen_ai.response.id", answer.id ?? undefined)
    .set("gen_ai.response.finish_reasons", answer.finishReason ?? undefined)
    .set("switchyard.generation_id", generationId)
    .set("switchyard.status", answer.status);
  if (answer.status === "error") span.set("error.type", "stream_error");
  span.end(answer.status === "error" ? "the answer failed after its first byte" : undefined);
}
