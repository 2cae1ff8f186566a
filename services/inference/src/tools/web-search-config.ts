import { badRequest } from "@switchyard/runtime";

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

/** The web search tool's settings as `@openrouter/sdk` sends them: in `parameters`, and at the top level of the `web_search*` types. */
const settings = [
  "allowed_domains",
  "excluded_domains",
  "engine",
  "max_characters",
  "max_results",
  "max_total_results",
  "max_uses",
  "mode",
  "search_context_size",
  "user_location",
  "x_search",
] as const;
/**
 * Keys of the tool itself: `name` and `cache_control` come with tools declared on `/messages`;
 * `external_web_access` with OpenAI's `web_search` (Codex sends false, OpenAI's cached mode). The search
 * returns the backend's indexed results and never fetches a page, which is what false asks for, and all that
 * true allows.
 */
const toolKeys = new Set(["type", "parameters", "filters", "name", "cache_control", "external_web_access"]);
/** The legacy `filters` object's keys; `blocked_domains` is another name for excluded ones. */
const filterKeys = ["allowed_domains", "excluded_domains", "blocked_domains"] as const;
const listed = (keys: readonly string[]) => `${keys.slice(0, -1).join(", ")} and ${keys.at(-1)}`;

/**
 * Settings the operator's backend has no way to apply: the values that ask for what it does regardless (null
 * always does), and why another is refused.
 */
const backendDecides: Record<string, { accepted: readonly unknown[]; why: string }> = {
  engine: { accepted: ["auto"], why: 'this gateway searches on its operator\'s backend (WEB_SEARCH_URL); only "auto" is supported' },
  mode: { accepted: ["auto"], why: 'the operator\'s backend has one search mode; only "auto" is supported' },
  search_context_size: { accepted: ["medium"], why: 'only "medium", the default, is supported; max_results and max_characters set how much the model reads' },
  user_location: { accepted: [], why: "the operator's backend does not localize results; only null is supported" },
  x_search: { accepted: [], why: "the operator's backend does not search X; only null is supported" },
};

/** An object of settings, or undefined when it is not given (absent or null). */
function settingsObject(value: unknown, where: string): Json | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "object" || Array.isArray(value)) throw badRequest(`Invalid body: ${where}: must be an object`);
  return value as Json;
}

/** Refuses a key that is no setting of `known`, naming it. */
function knownKeys(source: Json, where: string, known: (key: string) => boolean, takes: string): void {
  for (const key of Object.keys(source)) {
    if (!known(key)) throw badRequest(`Invalid body: ${where}.${key}: unknown field; ${takes}`);
  }
}

/** Refuses a value of a setting the backend decides that asks for something else than what it does. */
function checkBackendDecides(source: Json, where: string): void {
  for (const [field, { accepted, why }] of Object.entries(backendDecides)) {
    const value = source[field];
    if (value !== undefined && value !== null && !accepted.includes(value)) throw badRequest(`Invalid body: ${where}.${field}: ${why}`);
  }
}

/**
 * A web search tool's settings from every place `@openrouter/sdk` puts them: `parameters` (the
 * `openrouter:web_search` tool and the shorthand), the same fields at the tool's top level (the
 * `web_search*` shorthand types), and the legacy `filters` object, whose `blocked_domains` is another name
 * for excluded ones. A key that is no setting is refused; so is a value of `engine`, `mode`,
 * `search_context_size`, `user_location` or `x_search` other than the one that asks for what the operator's
 * backend does, which decides them (see `backendDecides`).
 */
export function webSearchConfig(tool: Json, where: string): Json {
  const parameters = settingsObject(tool.parameters, `${where}.parameters`) ?? {};
  const filters = settingsObject(tool.filters, `${where}.filters`) ?? {};
  const takes = `openrouter:web_search takes ${listed(settings)}`;
  knownKeys(parameters, `${where}.parameters`, (key) => (settings as readonly string[]).includes(key), takes);
  knownKeys(tool, where, (key) => toolKeys.has(key) || (settings as readonly string[]).includes(key), `${takes}, in parameters or at the tool's top level`);
  knownKeys(filters, `${where}.filters`, (key) => (filterKeys as readonly string[]).includes(key), `filters takes ${listed(filterKeys)}`);
  const external = tool.external_web_access;
  if (external !== undefined && external !== null && typeof external !== "boolean") throw badRequest(`Invalid body: ${where}.external_web_access: must be a boolean`);
  checkBackendDecides(parameters, `${where}.parameters`);
  checkBackendDecides(tool, where);
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
