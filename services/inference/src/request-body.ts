import type { ChatCompletionRequest } from "@switchyard/contracts";
import { badRequest } from "@switchyard/runtime";
import { endUser, sortOf } from "@switchyard/upstream";

/** Fields that steer the gateway itself and mean nothing (or something else) to a provider. */
const gatewayOnly = new Set([
  "include_reasoning",
  "model",
  "models",
  "provider",
  "route",
  "plugins",
  "preset",
  "session_id",
  "usage",
  "transforms",
  "trace",
  "debug",
  "stop_when",
  "stop_server_tools_when",
  "stream",
  "stream_options",
  "metadata",
  "user",
  "max_tool_calls",
  // The client's labels of a Responses request: only OpenAI's Responses API has a place for them (its adapter's `reads`).
  "client_metadata",
]);

/**
 * The request's provider preferences with the deprecated `route` applied, as the spec maps it: `fallback`
 * is `provider.sort`'s partition `model` (the default), `sort` is partition `none` (the endpoints of every
 * model sorted as one list). A partition given beside it must agree with it.
 */
export function routedPreferences(request: ChatCompletionRequest): ChatCompletionRequest["provider"] {
  const preferences = request.provider;
  if (!request.route) return preferences;
  const partition = request.route === "sort" ? "none" : "model";
  const sort = preferences?.sort;
  const given = typeof sort === "object" && sort !== null ? sort.partition : undefined;
  if (given !== undefined && given !== partition) {
    throw badRequest(`Invalid body: route: ${request.route} (partition ${partition}) conflicts with provider.sort.partition ${given}; send one of them`);
  }
  const by = sortOf(preferences ?? undefined);
  if (partition === "model" || given !== undefined || (by !== "price" && by !== "latency" && by !== "throughput")) return preferences;
  return { ...preferences, sort: { by, partition } };
}

/**
 * The body sent upstream: the caller's parameters, unknown ones included, without the gateway's own.
 * The end-user ids (`user`, `safety_identifier`) never leave raw: providers see a per-workspace hash.
 */
export function upstreamBody(request: ChatCompletionRequest, workspaceId: string, systemPrompt?: string) {
  const body: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(request)) {
    if (!gatewayOnly.has(name) && value !== undefined) body[name] = value;
  }
  // `fast` is the spec's alias of `priority`; providers know only the latter.
  if (body.service_tier === "fast") body.service_tier = "priority";
  if (typeof request.user === "string") body.user = endUser(workspaceId, request.user);
  // OpenAI's successor of `user` names the end user too, and leaves as the same per-workspace hash.
  if (typeof body.safety_identifier === "string") body.safety_identifier = endUser(workspaceId, body.safety_identifier);
  // The summary names it once, as the caller sent it (`dropUnsupported`).
  if (typeof body.reasoning_effort !== "string" && typeof request.reasoning?.effort === "string") body.reasoning_effort = request.reasoning.effort;
  if (systemPrompt && Array.isArray(body.messages) && !body.messages.some((m) => (m as { role?: string }).role === "system")) {
    body.messages = [{ role: "system", content: systemPrompt }, ...body.messages];
  }
  return body;
}

/** The request's parameters that an endpoint must support under `provider.require_parameters`; null asks for the default. */
export function requestedParameters(request: ChatCompletionRequest): string[] {
  return Object.keys(request).filter((name) => !gatewayOnly.has(name) && name !== "messages" && request[name] !== undefined && request[name] !== null);
}

/** The fields that limit a chat body's output, the explicit one first: each adapter reads them in this order. */
export const limitFields = ["max_completion_tokens", "max_tokens"] as const;

/**
 * The completion tokens a chat body allows one choice on an endpoint: `max_completion_tokens`, else
 * `max_tokens`, at most the endpoint's own maximum where the catalog sets one; undefined when it gives neither.
 * The spend hold reserves this, and every adapter sends no more.
 */
export function outputLimit(body: Record<string, unknown>, endpointMax: number | null): number | undefined {
  const asked = limitFields.map((name) => body[name]).find((value) => value !== undefined && value !== null);
  if (typeof asked !== "number") return undefined;
  return endpointMax === null ? asked : Math.min(asked, endpointMax);
}

/**
 * `body` with each output limit field it gives set to its `outputLimit`, so that a provider honouring either
 * field reads the limit the hold covers. A field the body leaves out stays out: some servers refuse one of them.
 */
export function withOutputLimit(body: Record<string, unknown>, endpointMax: number | null): Record<string, unknown> {
  const limit = outputLimit(body, endpointMax);
  const given = limitFields.filter((name) => body[name] !== undefined && body[name] !== null);
  if (limit === undefined || given.every((name) => body[name] === limit)) return body;
  const out = { ...body };
  for (const name of given) out[name] = limit;
  return out;
}

/** The choices a chat body asks for (`n`, a whole number the contract checks); 1 when it gives none. */
export const choicesAsked = (body: Record<string, unknown>): number => (typeof body.n === "number" && Number.isInteger(body.n) && body.n > 1 ? body.n : 1);
