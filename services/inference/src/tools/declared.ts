import type { ChatCompletionRequest, SandboxContainer } from "@switchyard/contracts";
import { badRequest } from "@switchyard/runtime";
import { webFetchConfig } from "./web-fetch.js";
import { webSearchConfig } from "./web-search-config.js";
import { record } from "../json.js";

/** What the gateway does with calls to a declared server tool. */
export type ServerToolKind = "datetime" | "web_search" | "web_fetch" | "bash" | "shell";

export interface ServerTool {
  kind: ServerToolKind;
  /** The type the client declared, e.g. `openrouter:web_search`. */
  type: string;
  /** The function name the model calls it by. */
  name: string;
  /** The tool's settings: its `parameters` as declared (timezone, environment...); for web search, gathered from every form the SDK sends; for web fetch, checked and normalized. */
  config: Record<string, unknown>;
}

export interface DeclaredTools {
  /** Server tools by the function name the model calls. */
  server: Map<string, ServerTool>;
  /** The tool list providers get: the client's function tools and a function for each server tool. */
  upstream: Array<Record<string, unknown>>;
  /** A `tool_choice` naming a server tool, as a function choice for the first turn. */
  firstChoice: unknown;
}

const kinds: Record<string, ServerToolKind> = {
  "openrouter:datetime": "datetime",
  "openrouter:web_search": "web_search",
  web_search: "web_search",
  web_search_preview: "web_search",
  web_search_preview_2025_03_11: "web_search",
  web_search_2025_08_26: "web_search",
  "openrouter:web_fetch": "web_fetch",
  "openrouter:bash": "bash",
  "openrouter:shell": "shell",
  shell: "shell",
};

const definitions: Record<ServerToolKind, { name: string; description: string; parameters: Record<string, unknown> }> = {
  datetime: {
    name: "datetime",
    description: "Returns the current date and time.",
    parameters: { type: "object", properties: { timezone: { type: "string", description: "IANA timezone name, e.g. America/New_York" } } },
  },
  web_search: {
    name: "web_search",
    description: "Searches the web and returns the most relevant results with their titles, URLs and excerpts.",
    parameters: { type: "object", properties: { query: { type: "string", description: "What to search for" } }, required: ["query"] },
  },
  web_fetch: {
    name: "web_fetch",
    description: "Fetches a web page or text document by its URL and returns its readable text, with the page title and the final URL after redirects.",
    parameters: { type: "object", properties: { url: { type: "string", description: "The http or https URL to fetch" } }, required: ["url"] },
  },
  bash: {
    name: "bash",
    description: "Runs a bash command in a sandboxed Linux container with no network. Files persist in the home folder between commands.",
    parameters: {
      type: "object",
      properties: { command: { type: "string", description: "The command to run" }, restart: { type: "boolean", description: "Start a fresh container" } },
    },
  },
  shell: {
    name: "shell",
    description: "Runs shell commands in order in a sandboxed Linux container with no network. Files persist in the home folder between calls.",
    parameters: {
      type: "object",
      properties: {
        commands: { type: "array", items: { type: "string" }, description: "Commands to run, each in its own shell" },
        timeout_ms: { type: "integer", description: "Time limit of each command in milliseconds" },
      },
      required: ["commands"],
    },
  },
};

export const serverToolTypes = Object.keys(kinds);

/**
 * The function name the model knows a server tool by, for a call replayed from an earlier answer. A tool
 * this gateway does not run (another gateway's, such as openrouter:fusion) keeps its name, made legal.
 */
export function toolFunctionName(type: string): string {
  const kind = kinds[type];
  return kind ? definitions[kind].name : type.replace(/^openrouter:/, "").replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 64) || "server_tool";
}

export interface ToolAvailability {
  sandbox: boolean;
  webSearch: boolean;
  /** The operator lets the gateway fetch pages (WEB_FETCH_ENABLED). */
  webFetch: boolean;
  /** Server tool types the workspace turned off. */
  disabled: string[];
}


/** Checks one server tool's settings; what this gateway cannot honour is refused before spend is held. */
function checkConfig(tool: ServerTool, where: string, availability: ToolAvailability) {
  const { config } = tool;
  if (tool.kind === "datetime" && config.timezone !== undefined && !validTimezone(config.timezone)) {
    throw badRequest(`Invalid body: ${where}.parameters.timezone: not an IANA timezone name`);
  }
  if (tool.kind === "web_search") {
    if (!availability.webSearch) throw badRequest(`Invalid body: ${where}: ${tool.type} needs a search backend, and this gateway has none configured (WEB_SEARCH_URL)`);
  }
  if (tool.kind === "web_fetch" && !availability.webFetch) {
    throw badRequest(`Invalid body: ${where}: ${tool.type} is turned off on this gateway (WEB_FETCH_ENABLED)`);
  }
  if (tool.kind === "bash" || tool.kind === "shell") {
    if (!availability.sandbox) throw badRequest(`Invalid body: ${where}: ${tool.type} needs a sandbox, and this gateway has none configured (SANDBOX_URL)`);
    const environment = record(config.environment);
    if (environment.type !== undefined && environment.type !== "container_auto" && environment.type !== "container_reference") {
      throw badRequest(`Invalid body: ${where}.parameters.environment.type: must be container_auto or container_reference`);
    }
    if (environment.type === "container_reference" && !(typeof environment.container_id === "string" && /^[A-Za-z0-9][A-Za-z0-9_-]{0,39}$/.test(environment.container_id))) {
      throw badRequest(`Invalid body: ${where}.parameters.environment.container_id: must be 1 to 40 letters, digits, '_' or '-'`);
    }
    const policy = record(environment.network_policy);
    if (policy.type !== undefined && policy.type !== "disabled") {
      throw badRequest(`Invalid body: ${where}.parameters.environment.network_policy: this gateway's sandboxes have no network; only {"type": "disabled"} is supported`);
    }
    if (Array.isArray(environment.file_ids) && environment.file_ids.length > 0) {
      throw badRequest(`Invalid body: ${where}.parameters.environment.file_ids: attaching workspace files to a container is not supported by this gateway`);
    }
    const sleep = config.sleep_after_seconds;
    if (sleep !== undefined && !(Number.isInteger(sleep) && (sleep as number) >= 1 && (sleep as number) <= 2_592_000)) {
      throw badRequest(`Invalid body: ${where}.parameters.sleep_after_seconds: must be an integer from 1 to 2592000`);
    }
  }
}

export function validTimezone(value: unknown): value is string {
  if (typeof value !== "string" || value.length === 0) return false;
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: value });
    return true;
  } catch {
    return false;
  }
}

/**
 * Splits the request's tools into the client's function tools and the server tools the gateway runs.
 * Returns undefined when every tool is a function tool, so the request takes the plain path.
 */
export function declaredTools(request: ChatCompletionRequest, availability: ToolAvailability): DeclaredTools | undefined {
  const tools = request.tools ?? [];
  const server = new Map<string, ServerTool>();
  const upstream: Array<Record<string, unknown>> = [];
  const clientNames = new Set<string>();
  /** Server tools whose calls go back to the client, by function name. */
  const handedBack = new Set<string>();
  tools.forEach((tool, i) => {
    const where = `tools.${i}`;
    if (tool.type === "function") {
      const name = (tool as { function: { name: string } }).function.name;
      clientNames.add(name);
      upstream.push(tool as Record<string, unknown>);
      return;
    }
    const kind = kinds[tool.type];
    if (!kind) throw badRequest(`Invalid body: ${where}.type: ${tool.type} is not a server tool this gateway runs; it runs ${serverToolTypes.join(", ")}`);
    if (availability.disabled.includes(tool.type) || availability.disabled.includes(`openrouter:${kind}`)) {
      throw badRequest(`Invalid body: ${where}: ${tool.type} is disabled for this workspace`);
    }
    const declaredTool = tool as Record<string, unknown>;
    const config = kind === "web_search" ? webSearchConfig(declaredTool, where) : kind === "web_fetch" ? webFetchConfig(declaredTool, where) : record(declaredTool.parameters);
    // Bash's default engines hand the call back to the client, which runs it; only `openrouter` runs it here.
    const passthrough = kind === "bash" && config.engine !== "openrouter";
    const definition = definitions[kind];
    const declared: ServerTool = { kind, type: tool.type, name: definition.name, config };
    if (!passthrough) checkConfig(declared, where, availability);
    if (server.has(definition.name) || (passthrough && clientNames.has(definition.name))) throw badRequest(`Invalid body: ${where}: ${tool.type} is declared twice`);
    if (!passthrough) server.set(definition.name, declared);
    else {
      clientNames.add(definition.name);
      handedBack.add(definition.name);
    }
    // The gateway's own functions are not strict, whatever a wire format's default.
    upstream.push({ type: "function", function: { ...definition, strict: false } });
  });
  for (const name of server.keys()) {
    if (clientNames.has(name)) throw badRequest(`Invalid body: tools: a function named ${name} clashes with the server tool of that name`);
  }
  const firstChoice = chosenTool(request.tool_choice, server, handedBack);
  if (upstream.length === tools.filter((t) => t.type === "function").length) return undefined;
  return { server, upstream, firstChoice };
}

/** Choices by type that name no server tool: a function, a set of allowed tools, a custom tool. */
const clientChoiceTypes = new Set(["function", "allowed_tools", "custom"]);

/**
 * A `tool_choice` naming a server tool by its type, as the function choice of that tool; other choices as
 * they are. A type no tool of the request has is refused: the choice would otherwise be dropped.
 */
function chosenTool(choice: unknown, server: Map<string, ServerTool>, handedBack: Set<string>): unknown {
  const type = typeof choice === "object" && choice !== null ? (choice as { type?: unknown }).type : undefined;
  if (typeof type !== "string" || clientChoiceTypes.has(type)) return choice;
  const kind = kinds[type];
  const run = kind ? [...server.values()].find((t) => t.kind === kind)?.name : undefined;
  const named = run ?? (kind && handedBack.has(definitions[kind].name) ? definitions[kind].name : undefined);
  if (!named) throw badRequest(`Invalid body: tool_choice: must name a tool of the request; ${type} names none of its tools`);
  return { type: "function", function: { name: named } };
}

/** The container a sandboxed tool's commands run in. */
export function containerFor(tool: ServerTool, sessionId: string | undefined, generationId: string): SandboxContainer {
  const environment = record(tool.config.environment);
  if (environment.type === "container_reference") return { kind: "reference", id: String(environment.container_id) };
  return sessionId ? { kind: "session", key: sessionId } : { kind: "generation", id: generationId };
}
