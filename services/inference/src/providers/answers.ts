import { transientStatus, UpstreamError } from "@switchyard/upstream";
import { z } from "zod";

/**
 * A token count as every adapter accepts it from a provider: a whole number, never below zero. A figure past
 * what a request could produce is left to the charge's cap at the hold; a negative one would be a refund the
 * provider wrote for itself, so the answer that carries it is refused like one that does not parse.
 */
export const tokenCount = z.number().int().min(0);

/** A provider's own error code as an HTTP status: the code when it is one (OpenRouter-style servers send it), else 502. */
export function statusOfCode(code: unknown): number {
  const n = typeof code === "string" && /^\d{3}$/.test(code) ? Number(code) : code;
  return typeof n === "number" && Number.isInteger(n) && n >= 400 && n <= 599 ? n : 502;
}

/**
 * An error a provider sent as its answer (a 200 whose body or first event is an error): the failure its
 * status says, which another endpoint may not share when it is a rate limit, an overload or a server's.
 */
export const answeredError = (provider: string, status: number, message: string): UpstreamError => new UpstreamError(`${provider}: ${message}`, status, transientStatus(status));
