import { errorStatus, type ErrorKind } from "@switchyard/contracts";
import type { z } from "zod";

/** An error that becomes the spec's error envelope with the status of its kind. */
export class HttpError extends Error {
  readonly status: number;
  constructor(
    readonly kind: ErrorKind,
    message: string,
    readonly metadata?: Record<string, unknown>,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.status = errorStatus[kind];
  }
}

/**
 * How long a 429 or 503 tells the client to wait when nothing more precise is known. Clients that retry
 * (the OpenAI and OpenRouter SDKs, most HTTP libraries) honour `Retry-After`; without it they guess, often
 * at once, which is what an overloaded or rate-limited gateway least needs.
 */
export const defaultRetryAfterSeconds = 5;

/** `Retry-After` in whole seconds (at least 1: "0" invites an immediate retry), from milliseconds. */
export const retryAfterSeconds = (ms: number): string => String(Math.max(1, Math.ceil(ms / 1000)));

/** Statuses whose answers always say when to come back. */
export const carriesRetryAfter = (status: number): boolean => status === 429 || status === 503;

export const badRequest = (message: string, metadata?: Record<string, unknown>) =>
  new HttpError("bad_request", message, metadata);
export const unauthorized = (message = "Missing Authentication header") => new HttpError("unauthorized", message);
export const forbidden = (message: string) => new HttpError("forbidden", message);
export const notFound = (message = "Not found") => new HttpError("not_found", message);
export const conflict = (message: string) => new HttpError("conflict", message);

export const managementOnly = () => forbidden("Only management keys can perform this operation");

/** Formats a zod error as one line that names every offending field. */
export function describeZodError(error: z.ZodError, where: string): string {
  const parts = error.issues.map((issue) => {
    const path = issue.path.map(String).join(".");
    if (issue.code === "unrecognized_keys") {
      const keys = issue.keys.join(", ");
      return `${path ? `${path}: ` : ""}unknown field${issue.keys.length > 1 ? "s" : ""} ${keys}`;
    }
    return `${path || where}: ${issue.message}`;
  });
  return `Invalid ${where}: ${parts.join("; ")}`;
}

/** Parses untrusted input; a violation is a 400 whose message names the field. */
export function parseInput<T extends z.ZodType>(schema: T, value: unknown, where: string): z.infer<T> {
  const result = schema.safeParse(value);
  if (!result.success) throw badRequest(describeZodError(result.error, where));
  return result.data;
}
