import { serverToolCallType } from "@switchyard/contracts";
import { madeFrom } from "@switchyard/runtime";
import { mergeFindings, scanText, type CompiledFilters, type Finding } from "./scan.js";
import { filterJsonText, filterStrings } from "./values.js";

type Message = Record<string, unknown>;
type Role = "user" | "other";

/** A prompt's text after its filters ran, and what they found. */
export interface Filtered<T> {
  value: T;
  findings: Finding[];
}

export interface MessageFilterOptions {
  /**
   * Leave reasoning unscanned: set for the turns the gateway's own loop hands back to the provider that
   * wrote them within one request, which are its answer, not the caller's prompt.
   */
  skipReasoning?: boolean;
}

/**
 * Scans reasoning without changing it. Signed reasoning (Anthropic's signatures, Gemini's thought signatures)
 * stops verifying once its text is edited, and a turn without its reasoning is refused by thinking models
 * that made a tool call in it, so a match a filter would redact blocks the request instead.
 */
function scanReasoning(filters: CompiledFilters, text: string, found: Finding[][]): void {
  const { findings } = scanText(filters, text, "other");
  found.push(findings.map((f) => (f.action === "redact" ? { ...f, action: "block" } : f)));
}

/**
 * A message's `reasoning_details`: a server tool call an earlier answer carried is replayed to the provider
 * as a tool call and its result, so its arguments and result are redacted as those are; reasoning text and
 * summaries are scanned as reasoning. Encrypted entries are opaque and pass as they are.
 */
function filterDetails(filters: CompiledFilters, details: unknown[], found: Finding[][], skipReasoning: boolean): unknown[] {
  let changed = false;
  const out = details.map((entry: unknown) => {
    if (!entry || typeof entry !== "object") return entry;
    const detail = entry as Message;
    if (detail.type === serverToolCallType) {
      let next = detail;
      for (const key of ["arguments", "result"] as const) {
        const value = detail[key];
        if (typeof value !== "string") continue;
        const filtered = filterJsonText(filters, value, "other", found);
        if (filtered !== value) next = { ...next, [key]: filtered };
      }
      if (next !== detail) changed = true;
      return next;
    }
    if (skipReasoning) return entry;
    for (const key of ["text", "summary"] as const) if (typeof detail[key] === "string") scanReasoning(filters, detail[key], found);
    return entry;
  });
  return changed ? out : details;
}

/** One content part: a text part's text, a file part's name (Anthropic shows it as the document's title). */
function filterPart(filters: CompiledFilters, part: unknown, role: Role, found: Finding[][]): unknown {
  if (!part || typeof part !== "object") return part;
  const p = part as Message;
  if (typeof p.text === "string") {
    const scanned = scanText(filters, p.text, role);
    found.push(scanned.findings);
    return scanned.text === p.text ? part : { ...p, text: scanned.text };
  }
  const file = p.type === "file" && p.file && typeof p.file === "object" ? (p.file as Message) : undefined;
  if (file && typeof file.filename === "string") {
    const scanned = scanText(filters, file.filename, role);
    found.push(scanned.findings);
    return scanned.text === file.filename ? part : { ...p, file: { ...file, filename: scanned.text } };
  }
  return part;
}

/** A message's fields of text the provider reads as written. */
const textKeys = ["content", "refusal"] as const;

function filterMessage(filters: CompiledFilters, message: Message, found: Finding[][], options: MessageFilterOptions): Message {
  const role: Role = message.role === "user" ? "user" : "other";
  let out = message;
  const set = (key: string, value: unknown) => {
    if (out === message) out = { ...message };
    out[key] = value;
  };
  for (const key of textKeys) {
    const value = message[key];
    if (typeof value === "string") {
      const scanned = scanText(filters, value, role);
      found.push(scanned.findings);
      if (scanned.text !== value) set(key, scanned.text);
    } else if (key === "content" && Array.isArray(value)) {
      let changed = false;
      const parts = value.map((part: unknown) => {
        const filtered = filterPart(filters, part, role, found);
        if (filtered !== part) changed = true;
        return filtered;
      });
      if (changed) set(key, parts);
    }
  }
  if (Array.isArray(message.tool_calls)) {
    let changed = false;
    const calls = message.tool_calls.map((call: unknown) => {
      const fn = (call as { function?: { arguments?: unknown } } | null)?.function;
      if (!fn || typeof fn.arguments !== "string") return call;
      const args = filterJsonText(filters, fn.arguments, "other", found);
      if (args === fn.arguments) return call;
      changed = true;
      return { ...(call as Message), function: { ...fn, arguments: args } };
    });
    if (changed) set("tool_calls", calls);
  }
  if (Array.isArray(message.reasoning_details)) {
    const details = filterDetails(filters, message.reasoning_details, found, options.skipReasoning === true);
    if (details !== message.reasoning_details) set("reasoning_details", details);
  }
  if (!options.skipReasoning && typeof message.reasoning === "string") scanReasoning(filters, message.reasoning, found);
  return out;
}

/**
 * Scans every message a provider would read: text of every role and file names, refusals, tool call
 * arguments, the calls and results of server tools sent back in `reasoning_details`, and reasoning (which a
 * match blocks; see `scanReasoning`). Images and audio are not text and pass as they are. Messages nothing
 * was redacted in are the same objects as given.
 */
export function filterMessages(filters: CompiledFilters, messages: readonly Message[], options: MessageFilterOptions = {}): Filtered<Message[]> {
  if (filters.empty) return { value: messages as Message[], findings: [] };
  const found: Finding[][] = [];
  const value = messages.map((m) => (m && typeof m === "object" ? filterMessage(filters, m, found, options) : m));
  madeFrom(value, messages);
  return { value, findings: mergeFindings(found) };
}

/**
 * Scans the output a chat request predicts (`prediction.content`, a string or text parts), which the
 * provider reads as the caller wrote it. The same object when nothing was redacted.
 */
export function filterPrediction(filters: CompiledFilters, prediction: unknown): Filtered<unknown> {
  if (filters.empty || !prediction || typeof prediction !== "object") return { value: prediction, findings: [] };
  const content = (prediction as Message).content;
  const found: Finding[][] = [];
  let next: unknown = content;
  if (typeof content === "string") next = filterStrings(filters, content, "user", found);
  else if (Array.isArray(content)) {
    const parts = content.map((part: unknown) => filterPart(filters, part, "user", found));
    next = parts.some((part, i) => part !== content[i]) ? parts : content;
  }
  return { value: next === content ? prediction : { ...(prediction as Message), content: next }, findings: mergeFindings(found) };
}
