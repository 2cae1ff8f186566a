import type { SandboxExecRequest, SandboxExecResponse } from "@switchyard/contracts";
import { FetchFailed } from "@switchyard/upstream";
import type { Json } from "../generation/parts.js";
import { containerFor, validTimezone, type ServerTool, type ServerToolKind } from "./declared.js";
import type { SearchBackend } from "./search.js";
import { webFetch, type WebFetchOptions } from "./web-fetch.js";
import { onDomain } from "./web-search-config.js";

/** The sandbox service: in-process in standalone, `POST /internal/sandbox/exec` otherwise. */
export interface Sandbox {
  /** An abort (the client gone, the deadline passed) ends the command and the ones after it. */
  execute(request: SandboxExecRequest, signal?: AbortSignal): Promise<SandboxExecResponse>;
}

export interface ToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
  /** Provider data of the call, sent back as it came (Google's OpenAI-compatible API: the thought signature). */
  extra_content?: Json;
}

/**
 * One server tool call and what came of it: `output` is the tool message the model reads next, JSON
 * (`{"error": ...}` for a call that failed or was refused; a sandboxed tool's carries its `container_id`).
 */
export interface ToolRun {
  id: string;
  kind: ServerToolKind;
  name: string;
  arguments: string;
  output: string;
  /** Ran and produced a result; a refused or failed call did not. */
  executed: boolean;
}

export interface RunContext {
  organizationId: string;
  workspaceId: string;
  sessionId: string | undefined;
  /** The request's id: a container made for this request alone is named after it. */
  generationId: string;
  signal: AbortSignal;
  sandbox: Sandbox | undefined;
  search: SearchBackend | undefined;
  /** Web searches and their results so far in this request, against `max_uses` and `max_total_results`. */
  searches: { uses: number; results: number };
  /** The operator's bounds of web fetches; undefined when the gateway does not fetch pages. */
  webFetch: WebFetchOptions | undefined;
  /** Web fetches so far in this request, against `max_uses`. */
  fetches: { uses: number };
}

/** A call that did not run (refused, or failed): the model still reads a result for it, and a fetch's HTTP status. */
export const failedRun = (call: ToolCall, tool: ServerTool, message: string, status?: number): ToolRun => ({
  id: call.id,
  kind: tool.kind,
  name: tool.name,
  arguments: call.function.arguments,
  output: JSON.stringify({ error: message, ...(status !== undefined ? { status } : {}) }),
  executed: false,
});

const integer = (value: unknown, fallback: number) => (Number.isInteger(value) && (value as number) > 0 ? (value as number) : fallback);

function datetime(args: Record<string, unknown>, tool: ServerTool) {
  const timezone = args.timezone ?? tool.config.timezone ?? "UTC";
  if (!validTimezone(timezone)) throw new Error(`${String(timezone)} is not an IANA timezone name`);
  const now = new Date();
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat("en-US", { timeZone: timezone, hourCycle: "h23", year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit", weekday: "long", timeZoneName: "longOffset" })
      .formatToParts(now)
      .map((p) => [p.type, p.value]),
  );
  const offset = parts.timeZoneName === "GMT" ? "+00:00" : String(parts.timeZoneName).replace("GMT", "");
  return { datetime: `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}:${parts.second}${offset}`, timezone, weekday: parts.weekday, unix: Math.floor(now.getTime() / 1000) };
}

async function webSearch(args: Record<string, unknown>, tool: ServerTool, context: RunContext) {
  const query = args.query;
  if (typeof query !== "string" || !query.trim()) throw new Error("query must be a non-empty string");
  const { config } = tool;
  if (context.searches.uses >= integer(config.max_uses, Infinity)) throw new Error(`the limit of ${String(config.max_uses)} searches for this request is reached`);
  const room = integer(config.max_total_results, 50) - context.searches.results;
  if (room <= 0) throw new Error("the limit of search results for this request is reached");
  context.searches.uses += 1;
  // Lists normalized by webSearchConfig when the tool was declared.
  const allowed = config.allowed_domains as string[] | undefined;
  const excluded = (config.excluded_domains as string[] | undefined) ?? [];
  const maxCharacters = integer(config.max_characters, 1500);
  const found = await context.search!.search(query, { maxResults: Math.min(integer(config.max_results, 5), 20) * 2, signal: context.signal });
  const results = found
    .filter((r) => {
      const host = URL.canParse(r.url) ? new URL(r.url).hostname.toLowerCase() : "";
      return (!allowed || onDomain(host, allowed)) && !onDomain(host, excluded);
    })
    .slice(0, Math.min(integer(config.max_results, 5), 20, room))
    .map((r) => ({ ...r, snippet: r.snippet.slice(0, maxCharacters) }));
  context.searches.results += results.length;
  return { query, results };
}

async function sandboxed(args: Record<string, unknown>, tool: ServerTool, context: RunContext) {
  const commands = tool.kind === "bash" ? [args.command] : args.commands;
  if (!Array.isArray(commands) || commands.length === 0 || !commands.every((c) => typeof c === "string" && c.length > 0)) {
    throw new Error(tool.kind === "bash" ? "command must be a non-empty string" : "commands must be a non-empty array of strings");
  }
  const sleep = tool.config.sleep_after_seconds;
  const answer = await context.sandbox!.execute({
    organization_id: context.organizationId,
    workspace_id: context.workspaceId,
    container: containerFor(tool, context.sessionId, context.generationId),
    restart: args.restart === true,
    commands: commands as string[],
    ...(Number.isInteger(args.timeout_ms) && (args.timeout_ms as number) >= 100 ? { timeout_ms: args.timeout_ms as number } : {}),
    ...(Number.isInteger(sleep) ? { idle_ms: (sleep as number) * 1000 } : {}),
  }, context.signal);
  const files = answer.sync_error ? { files_error: answer.sync_error } : {};
  if (tool.kind === "bash") {
    const [result] = answer.results;
    return { container_id: answer.container_id, ...result, ...files };
  }
  return { container_id: answer.container_id, results: answer.results, ...files };
}

/** Runs one call the model made to a server tool; a failure is a result the model reads, never a crash. */
export async function runTool(call: ToolCall, tool: ServerTool, context: RunContext): Promise<ToolRun> {
  let args: Record<string, unknown>;
  try {
    const parsed = JSON.parse(call.function.arguments || "{}") as unknown;
    if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) throw new Error("not an object");
    args = parsed as Record<string, unknown>;
  } catch {
    return failedRun(call, tool, "arguments are not a JSON object");
  }
  try {
    const output =
      tool.kind === "datetime"
        ? datetime(args, tool)
        : tool.kind === "web_search"
          ? await webSearch(args, tool, context)
          : tool.kind === "web_fetch"
            ? await webFetch(args, tool.config, context)
            : await sandboxed(args, tool, context);
    return { id: call.id, kind: tool.kind, name: tool.name, arguments: call.function.arguments, output: JSON.stringify(output), executed: true };
  } catch (error) {
    if (context.signal.aborted) throw error;
    return failedRun(call, tool, (error as Error).message, error instanceof FetchFailed ? error.status : undefined);
  }
}
