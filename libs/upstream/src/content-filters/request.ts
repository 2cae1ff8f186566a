import type { ResolvedContentFilter } from "@switchyard/contracts";
import { HttpError, madeFrom, metrics, serviceOf, type Logger } from "@switchyard/runtime";
import { compileFilters, mergeFindings, scanText, type CompiledFilters, type FilterRule, type Finding } from "./scan.js";

/** The guardrails' filters of a resolution, compiled (compiled sets are cached, so this is cheap per request). */
export function requestFilters(filters: readonly ResolvedContentFilter[]): CompiledFilters {
  const rules: FilterRule[] = filters.map((f) =>
    f.kind === "builtin"
      ? { guardrailId: f.guardrail_id, kind: "builtin", slug: f.slug, action: f.action, label: f.label, ...(f.scan_scope ? { scanScope: f.scan_scope } : {}) }
      : { guardrailId: f.guardrail_id, kind: "pattern", index: f.index, pattern: f.pattern, action: f.action, label: f.label },
  );
  return compileFilters(rules);
}

/** A prompt's text after its filters ran, and what they found. */
export interface Filtered<T> {
  value: T;
  findings: Finding[];
}

type Message = Record<string, unknown>;

/** Scans the string leaves of a tool call's JSON arguments, so a label never breaks their JSON. */
function filterArguments(filters: CompiledFilters, args: string, found: Finding[][]): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(args);
  } catch {
    const scanned = scanText(filters, args, "other");
    found.push(scanned.findings);
    return scanned.text;
  }
  let changed = false;
  const walk = (value: unknown): unknown => {
    if (typeof value === "string") {
      const scanned = scanText(filters, value, "other");
      found.push(scanned.findings);
      if (scanned.text !== value) changed = true;
      return scanned.text;
    }
    if (Array.isArray(value)) return value.map(walk);
    if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v)]));
    return value;
  };
  const walked = walk(parsed);
  return changed ? JSON.stringify(walked) : args;
}

function filterMessage(filters: CompiledFilters, message: Message, found: Finding[][]): Message {
  const role = message.role === "user" ? "user" : "other";
  let out = message;
  const set = (key: string, value: unknown) => {
    if (out === message) out = { ...message };
    out[key] = value;
  };
  if (typeof message.content === "string") {
    const scanned = scanText(filters, message.content, role);
    found.push(scanned.findings);
    if (scanned.text !== message.content) set("content", scanned.text);
  } else if (Array.isArray(message.content)) {
    let changed = false;
    const parts = message.content.map((part: unknown) => {
      if (!part || typeof part !== "object" || typeof (part as Message).text !== "string") return part;
      const text = (part as Message).text as string;
      const scanned = scanText(filters, text, role);
      found.push(scanned.findings);
      if (scanned.text === text) return part;
      changed = true;
      return { ...(part as Message), text: scanned.text };
    });
    if (changed) set("content", parts);
  }
  if (Array.isArray(message.tool_calls)) {
    let changed = false;
    const calls = message.tool_calls.map((call: unknown) => {
      const fn = (call as { function?: { arguments?: unknown } } | null)?.function;
      if (!fn || typeof fn.arguments !== "string") return call;
      const args = filterArguments(filters, fn.arguments, found);
      if (args === fn.arguments) return call;
      changed = true;
      return { ...(call as Message), function: { ...fn, arguments: args } };
    });
    if (changed) set("tool_calls", calls);
  }
  return out;
}

/**
 * Scans every message a provider would read (text of every role, tool call arguments; images and audio are
 * not text and pass as they are). Messages nothing was redacted in are the same objects as given.
 */
export function filterMessages(filters: CompiledFilters, messages: readonly Message[]): Filtered<Message[]> {
  if (filters.empty) return { value: messages as Message[], findings: [] };
  const found: Finding[][] = [];
  const value = messages.map((m) => (m && typeof m === "object" ? filterMessage(filters, m, found) : m));
  madeFrom(value, messages);
  return { value, findings: mergeFindings(found) };
}

/** Scans one prompt the caller wrote (an image's description, a transcription's hint). */
export function filterPrompt(filters: CompiledFilters, prompt: string): Filtered<string> {
  if (filters.empty) return { value: prompt, findings: [] };
  const scanned = scanText(filters, prompt, "user");
  return { value: scanned.text, findings: scanned.findings };
}

/** Scans several texts the caller wrote (inputs to embed, a query and its documents), in order. */
export function filterTexts(filters: CompiledFilters, texts: readonly string[]): Filtered<string[]> {
  if (filters.empty) return { value: [...texts], findings: [] };
  const found: Finding[][] = [];
  const value = texts.map((text) => {
    const scanned = scanText(filters, text, "user");
    found.push(scanned.findings);
    return scanned.text;
  });
  return { value, findings: mergeFindings(found) };
}

/**
 * Counts what the filters found (for the service `logger` speaks for) and refuses the request if one blocks
 * it: 403 naming the guardrail and the filter, never what matched. Called before a hold is taken or
 * provider called.
 */
export function enforceFindings(findings: readonly Finding[], route: string, logger: Logger): void {
  for (const f of findings) metrics.contentFilterMatches.inc({ service: serviceOf(logger), route, filter: f.filter, action: f.action }, f.count);
  const blocked = findings.find((f) => f.action === "block");
  if (blocked) {
    throw new HttpError("forbidden", `Request blocked by guardrail ${blocked.guardrailId}: its content filter ${blocked.filter} matched the prompt`, {
      guardrail_id: blocked.guardrailId,
      filter: blocked.filter,
    });
  }
}

/** What a generation records of its findings (redactions and flags): no matched text. */
export const findingsRecord = (findings: readonly Finding[]) =>
  findings.map((f) => ({ guardrail_id: f.guardrailId, filter: f.filter, action: f.action, count: f.count }));
