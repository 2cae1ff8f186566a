import http from "node:http";
import type { z } from "zod";
import { textOf } from "./chunk-text.js";
import { refusedServiceHeader, serviceCredentialsRefused } from "./caller.js";
import { HttpError } from "./errors.js";
import { serviceHeader } from "./internal-auth.js";
import { currentRequestId, requestIdHeader } from "./request-context.js";
import { currentTraceparent } from "../tracing/spans.js";
import { traceparentHeader } from "../tracing/traceparent.js";

const envelopeOf = (text: string): { code?: unknown; message?: unknown } | undefined => {
  try {
    const body = JSON.parse(text) as { error?: { code?: unknown; message?: unknown } } | null;
    return typeof body?.error === "object" && body.error !== null ? body.error : undefined;
  } catch {
    return undefined;
  }
};

const messageOf = (text: string): string => {
  const message = envelopeOf(text)?.message;
  return typeof message === "string" ? message : "Request refused";
};

/**
 * The message of a 401 that refuses the client's key (identity found it deleted, disabled or expired after
 * the router let it through); undefined for every other 401: the service refusing this service's own token
 * (marked by `refusedServiceHeader`, or with its message), or an answer not in the error envelope.
 */
function keyRefusal(headers: http.IncomingHttpHeaders, text: string): string | undefined {
  if (headers[refusedServiceHeader] !== undefined) return undefined;
  const error = envelopeOf(text);
  if (error?.code !== 401 || typeof error.message !== "string" || error.message === serviceCredentialsRefused) return undefined;
  return error.message;
}

/** Another service could not be asked (down, slow, or answering with an error). */
export class ServiceUnavailableError extends Error {
  override readonly name = "ServiceUnavailableError";
}

export interface InternalClient {
  /**
   * POSTs JSON to an `/internal/...` route; a 404 is `undefined`, another status than 200 throws. An abort
   * closes the request, which tells the service its caller is gone (and is not sent again).
   */
  post<T extends z.ZodType>(path: string, body: unknown, schema: T, signal?: AbortSignal): Promise<z.infer<T> | undefined>;
}

/** The request never reached the service: nothing happened there, so it may be sent again. */
class NotDelivered extends ServiceUnavailableError {}
/** The connection dropped before an answer came: the service may or may not have acted on the request. */
class Unanswered extends ServiceUnavailableError {}

export interface InternalClientOptions {
  /** How long calls that did not get through are sent again, with backoff. */
  retryMs?: number;
  /**
   * The routes called are idempotent (reads, upserts keyed by the caller's id), so a call whose connection
   * dropped before its answer may be sent again too. Off for calls that must not run twice.
   */
  idempotent?: boolean;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Calls another service's internal routes over a keep-alive pool, with this service's signed token. A call
 * that never reached the service (connection refused while it restarts, or a reused idle connection it had
 * just closed), and for idempotent routes one whose connection dropped before the answer, is sent again
 * with backoff for up to `retryMs`, so a rolling restart delays callers instead of failing them.
 */
export function createInternalClient(baseUrl: string, serviceToken: () => Promise<string>, timeoutMs = 5000, options: InternalClientOptions = {}): InternalClient {
  const { retryMs = 10_000, idempotent = true } = options;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const once = async (path: string, payload: string, signal: AbortSignal | undefined) => {
    const token = await serviceToken();
    const requestId = currentRequestId();
    const traceparent = currentTraceparent();
    return new Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string }>((resolve, reject) => {
      const req = http.request(
        new URL(path, baseUrl),
        {
          method: "POST",
          agent,
          timeout: timeoutMs,
          ...(signal ? { signal } : {}),
          headers: {
            "content-type": "application/json",
            "content-length": Buffer.byteLength(payload),
            [serviceHeader]: token,
            ...(requestId ? { [requestIdHeader]: requestId } : {}),
            // The service's span of this request is a child of the caller's.
            ...(traceparent ? { [traceparentHeader]: traceparent } : {}),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (chunk: Buffer) => chunks.push(chunk));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: textOf(chunks) }));
          res.on("error", (error) => reject(new ServiceUnavailableError(error.message)));
        },
      );
      req.on("timeout", () => req.destroy(new Error(`${path} timed out after ${timeoutMs} ms`)));
      req.on("error", (error: NodeJS.ErrnoException) => {
        // Refused, reset while connecting (the listener closed with us in its backlog), or a reused idle
        // connection the server had just closed: in each case the service never read the request.
        const notDelivered = error.code === "ECONNREFUSED" || error.syscall === "connect" || (req.reusedSocket && (error.code === "ECONNRESET" || error.code === "EPIPE"));
        const dropped = error.code === "ECONNRESET" || error.code === "EPIPE";
        reject(new (notDelivered ? NotDelivered : dropped ? Unanswered : ServiceUnavailableError)(error.message));
      });
      req.end(payload);
    });
  };
  return {
    async post(path, body, schema, signal) {
      const payload = JSON.stringify(body);
      const started = Date.now();
      let answer: { status: number; headers: http.IncomingHttpHeaders; text: string };
      for (let attempt = 0; ; attempt += 1) {
        try {
          answer = await once(path, payload, signal);
          break;
        } catch (error) {
          if (signal?.aborted) throw error;
          const wait = Math.min(50 * 2 ** attempt, 1000);
          const again = error instanceof NotDelivered || (idempotent && error instanceof Unanswered);
          if (!again || Date.now() - started + wait > retryMs) throw error;
          await pause(wait);
        }
      }
      const { status, headers, text } = answer;
      if (status === 404) return undefined;
      // A refusal the other service explained (bad input, conflict, the client's key) reaches our caller as it was said.
      if (status === 400 || status === 403 || status === 409) throw new HttpError(status === 400 ? "bad_request" : status === 403 ? "forbidden" : "conflict", messageOf(text));
      const refusedKey = status === 401 ? keyRefusal(headers, text) : undefined;
      if (refusedKey !== undefined) throw new HttpError("unauthorized", refusedKey);
      if (status !== 200) throw new ServiceUnavailableError(`${path} answered ${status}: ${messageOf(text)}`);
      return schema.parse(JSON.parse(text));
    },
  };
}
