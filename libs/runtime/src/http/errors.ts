import { errorStatus, type ErrorKind } from "@switchyard/contracts";
import type { z } from "zod";
import { inputProblem, shortPath } from "./input-guard.js";

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

/** At most this many problems are listed in one answer; the rest are counted. */
export const maxListedIssues = 5;
/** Longest reason told for one problem, in characters: zod's may echo a long list of options. */
const maxReasonLength = 200;

const shorten = (text: string) => (text.length > maxReasonLength ? `${text.slice(0, maxReasonLength - 1)}…` : text);

/**
 * Formats a zod error as one line that names the offending fields: the first few, each path and reason
 * short, so a body of a million bad items is answered in well under a kilobyte.
 */
export function describeZodError(error: z.ZodError, where: string): string {
  const parts = error.issues.slice(0, maxListedIssues).map((issue) => {
    const path = shortPath(issue.path.map(String).join("."));
    if (issue.code === "unrecognized_keys") {
      const keys = issue.keys.join(", ");
      return `${path ? `${path}: ` : ""}${shorten(`unknown field${issue.keys.length > 1 ? "s" : ""} ${keys}`)}`;
    }
    return `${path || where}: ${shorten(issue.message)}`;
  });
  const more = error.issues.length - parts.length;
  return `Invalid ${where}: ${parts.join("; ")}${more > 0 ? ` (and ${more} more)` : ""}`;
}

/**
 * Stops each array and object at its first bad member: without it, a million bad items build a million
 * issues (about 1 GB) before the first is reported. zod's own `validate` parses this way. `async: false` is
 * what `safeParse` adds to a context it is given: present already, it is replaced in the copy instead of
 * added, which on Node 20 would give each parse's context a hidden class of its own (see `extended`) and
 * make every schema that reads it slower.
 */
const stopAtFirstIssue: z.core.ParseContextInternal<z.core.$ZodIssue> = { abortEarly: true, async: false };

/**
 * Parses untrusted input; a violation is a 400 whose message names the field. Input nested too deep or
 * carrying NUL characters is refused first (see `inputProblem`).
 */
export function parseInput<T extends z.ZodType>(schema: T, value: unknown, where: string): z.infer<T> {
  const problem = inputProblem(value, where);
  if (problem) throw badRequest(`Invalid ${where}: ${problem}`);
  const result = schema.safeParse(value, stopAtFirstIssue);
  if (!result.success) throw badRequest(describeZodError(result.error, where));
  return result.data;
}
