import { badRequest } from "@switchyard/runtime";
import { record } from "../json.js";

type Json = Record<string, unknown>;


const limits = ["max_results", "max_total_results", "max_uses", "max_characters"] as const;

/**
 * A domain as results are matched against it: `https://Docs.Example.com/path` and `*.example.com` name
 * the host and the domain they look like, not a URL prefix or a pattern.
 */
function domain(value: string): string {
  return value
    .trim()
    .toLowerCase()
    .replace(/^[a-z][a-z0-9+.-]*:\/\//, "")
    .replace(/[/?#].*$/, "")
    .replace(/:\d+$/, "")
    .replace(/^\*\./, "")
    .replace(/\.$/, "");
}

/** A request's list of domains, normalized; undefined when it restricts nothing. */
export function domains(value: unknown, where: string): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || !value.every((d) => typeof d === "string" && domain(d).length > 0)) {
    throw badRequest(`Invalid body: ${where}: must be an array of domain names`);
  }
  // An empty list restricts nothing, as if it were not given.
  return value.length ? [...new Set(value.map((d) => domain(d as string)))] : undefined;
}

/** One setting given in two places must agree: which of two different restrictions is meant is a guess. */
export function pick(sources: Array<[string, unknown]>, where: string, field: string): unknown {
  const given = sources.filter(([, v]) => v !== undefined);
  const [first] = given;
  if (!first) return undefined;
  for (const [at, value] of given.slice(1)) {
    if (JSON.stringify(value) !== JSON.stringify(first[1])) throw badRequest(`Invalid body: ${where}: ${field} is given in ${first[0]} and in ${at} with different values`);
  }
  return first[1];
}

/**
 * A web search tool's settings from every place `@openrouter/sdk` puts them: `parameters` (the
 * `openrouter:web_search` tool and the shorthand), the same fields at the tool's top level (the
 * `web_search*` shorthand types), and the legacy `filters` object, whose `blocked_domains` is another name
 * for excluded ones. Settings this gateway cannot apply (`engine`, `search_context_size`, `user_location`)
 * are left out: the operator's backend decides them.
 */
export function webSearchConfig(tool: Json, where: string): Json {
  const parameters = record(tool.parameters);
  const filters = record(tool.filters);
  const config: Json = {};
  for (const field of limits) {
    const value = pick([[`${where}.parameters`, parameters[field]], [where, tool[field]]], where, field);
    if (value !== undefined && !(Number.isInteger(value) && (value as number) >= 1)) throw badRequest(`Invalid body: ${where}: ${field} must be a positive integer`);
    if (value !== undefined) config[field] = value;
  }
  const allowed = pick(
    [
      [`${where}.parameters`, domains(parameters.allowed_domains, `${where}.parameters.allowed_domains`)],
      [where, domains(tool.allowed_domains, `${where}.allowed_domains`)],
      [`${where}.filters`, domains(filters.allowed_domains, `${where}.filters.allowed_domains`)],
    ],
    where,
    "allowed_domains",
  );
  // Exclusions only ever narrow the results, so every list given is applied.
  const excluded = [
    domains(parameters.excluded_domains, `${where}.parameters.excluded_domains`),
    domains(tool.excluded_domains, `${where}.excluded_domains`),
    domains(filters.excluded_domains, `${where}.filters.excluded_domains`),
    domains(filters.blocked_domains, `${where}.filters.blocked_domains`),
  ].flatMap((list) => list ?? []);
  if (allowed !== undefined && excluded.length > 0) throw badRequest(`Invalid body: ${where}: allowed_domains cannot be used with excluded_domains`);
  if (allowed !== undefined) config.allowed_domains = allowed;
  if (excluded.length > 0) config.excluded_domains = [...new Set(excluded)];
  return config;
}

/** Whether a result's host is one of the domains or under one of them. */
export const onDomain = (host: string, list: readonly string[]): boolean => list.some((d) => host === d || host.endsWith(`.${d}`));
