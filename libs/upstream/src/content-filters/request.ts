import type { ResolvedContentFilter } from "@switchyard/contracts";
import { HttpError, metrics, serviceOf, type Logger } from "@switchyard/runtime";
import type { Filtered } from "./messages.js";
import { compileFilters, mergeFindings, scanText, type CompiledFilters, type FilterRule, type Finding } from "./scan.js";

export { filterMessages, filterPrediction, type Filtered, type MessageFilterOptions } from "./messages.js";
export { filterOptions } from "./options.js";
export { filterDeclarations } from "./tools.js";

/** The guardrails' filters of a resolution, compiled (compiled sets are cached, so this is cheap per request). */
export function requestFilters(filters: readonly ResolvedContentFilter[]): CompiledFilters {
  const rules: FilterRule[] = filters.map((f) =>
    f.kind === "builtin"
      ? { guardrailId: f.guardrail_id, kind: "builtin", slug: f.slug, action: f.action, label: f.label, ...(f.scan_scope ? { scanScope: f.scan_scope } : {}) }
      : { guardrailId: f.guardrail_id, kind: "pattern", index: f.index, pattern: f.pattern, action: f.action, label: f.label },
  );
  return compileFilters(rules);
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
