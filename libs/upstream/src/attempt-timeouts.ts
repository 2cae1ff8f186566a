import { UpstreamError } from "./errors.js";

/** How long one attempt may wait on a provider; see `UPSTREAM_*_TIMEOUT_MS` in docs/configuration.md. */
export interface UpstreamTimeouts {
  /** From sending a request to the provider's first byte of answer: a stream's first event, a buffered answer whole. */
  firstByteMs: number;
  /** Longest silence between two events of a stream, once its first has arrived. */
  idleMs: number;
  /** How long an endpoint that failed (a timeout, a 5xx, no connection) goes behind healthy ones. */
  failureCooldownMs: number;
}

/** The provider sent nothing within the first-byte timeout: the next endpoint is tried, and this one rests. */
export class FirstByteTimeout extends UpstreamError {
  constructor(provider: string, ms: number) {
    super(`${provider} sent no first byte within ${ms} ms (the gateway's UPSTREAM_FIRST_BYTE_TIMEOUT_MS)`, null, true);
  }
}

/** A stream went quiet after its first event for longer than the idle timeout. */
export class StreamIdleTimeout extends UpstreamError {
  constructor(provider: string, ms: number) {
    super(`Timed out: ${provider} sent nothing for ${ms} ms mid-stream (the gateway's UPSTREAM_IDLE_TIMEOUT_MS)`, null, false);
  }
}

/** One attempt's signal: it follows the request's, and the attempt's own timers may abort it too. */
export interface AttemptSignal {
  signal: AbortSignal;
  abort(reason: Error): void;
  /** Whether this attempt's own timer, not the request, aborted it. */
  timedOut(): boolean;
  /** Stops following the request: for an attempt that failed and is done with. */
  detach(): void;
}

export function attemptSignal(request: AbortSignal): AttemptSignal {
  const controller = new AbortController();
  let own = false;
  const follow = () => controller.abort(request.reason);
  if (request.aborted) follow();
  else request.addEventListener("abort", follow, { once: true });
  return {
    signal: controller.signal,
    abort(reason) {
      if (controller.signal.aborted) return;
      own = true;
      controller.abort(reason);
    },
    timedOut: () => own,
    detach: () => request.removeEventListener("abort", follow),
  };
}

/** Statuses another endpoint may not share: a timeout, a rate limit, a server's failure or overload (5xx, 529), none at all. */
export const transientStatus = (status: number | null): boolean => status === null || status === 408 || status === 429 || status >= 500;

/**
 * A stream's failure before its first event: nothing reached the client, so whatever the adapter made of it
 * mid-stream (it cannot tell the first event from a later one), another endpoint may serve when its status
 * says the failure is the provider's (`transient`). A refusal of the request (a 4xx) stays one.
 */
function beforeFirstEvent(error: UpstreamError): UpstreamError {
  if (error.retryable || !transientStatus(error.status)) return error;
  return new UpstreamError(error.message, error.status, true, error.retryAfterMs);
}

/**
 * A stream accepted only once its first event has arrived (so a provider that sends headers and then nothing
 * is a first-byte timeout, with a fallback), whose later events may each be at most `idleMs` apart: past
 * that the attempt is aborted (the provider's connection closes) and the stream fails with `StreamIdleTimeout`.
 * A stream that fails or ends before its first event (an error for an event, a body of no events: an HTML
 * page, nothing) is a failure of the attempt, which falls back as its status allows.
 */
export async function firstEventThenIdle<T>(source: AsyncIterable<T>, attempt: AttemptSignal, provider: string, idleMs: number): Promise<AsyncIterable<T>> {
  const iterator = source[Symbol.asyncIterator]();
  let first: IteratorResult<T>;
  try {
    first = await iterator.next();
  } catch (error) {
    if (attempt.signal.aborted) throw error;
    if (error instanceof UpstreamError) throw beforeFirstEvent(error);
    // Headers came and the body broke before its first event: nothing reached the client, so another endpoint may serve.
    throw new UpstreamError(`${provider} dropped its stream before the first event: ${(error as Error).message}`, 502, true);
  }
  if (first.done) throw new UpstreamError(`${provider} ended its stream before the first event`, 502, true);
  return (async function* () {
    let ended = false;
    // One timer for the whole stream, re-armed at each read: it counts only while a read waits, so a slow
    // consumer holding an event is not the provider's silence.
    let reading = false;
    let rejectIdle: (error: StreamIdleTimeout) => void = () => undefined;
    const idle = new Promise<never>((_, reject) => (rejectIdle = reject));
    idle.catch(() => undefined);
    const timer = setTimeout(() => {
      if (!reading) return;
      const timeout = new StreamIdleTimeout(provider, idleMs);
      attempt.abort(timeout);
      rejectIdle(timeout);
    }, idleMs);
    try {
      yield first.value;
      for (;;) {
        reading = true;
        timer.refresh();
        const next = iterator.next();
        let step: IteratorResult<T>;
        try {
          step = await Promise.race([next, idle]);
        } catch (error) {
          // The pending read fails too once the attempt is aborted; nobody waits for it.
          next.catch(() => undefined);
          throw error;
        } finally {
          reading = false;
        }
        if (step.done) {
          ended = true;
          return;
        }
        yield step.value;
      }
    } finally {
      clearTimeout(timer);
      // A consumer that stops early lets the provider's body go.
      if (!ended) iterator.return?.()?.catch(() => undefined);
    }
  })();
}
