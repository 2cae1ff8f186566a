import { scanText, type CompiledFilters, type Finding } from "./scan.js";

/**
 * Scans every string inside a JSON value, at every depth; object keys are names, not text, and stay as they
 * are. What scanning found is appended to `found`. An array or object nothing was redacted in is returned as
 * the same instance, so untouched values keep their identity (and their keys' order).
 */
export function filterStrings(filters: CompiledFilters, value: unknown, role: "user" | "other", found: Finding[][]): unknown {
  if (typeof value === "string") {
    const scanned = scanText(filters, value, role);
    found.push(scanned.findings);
    return scanned.text;
  }
  if (Array.isArray(value)) {
    let changed = false;
    const out = value.map((item: unknown) => {
      const walked = filterStrings(filters, item, role, found);
      if (walked !== item) changed = true;
      return walked;
    });
    return changed ? out : value;
  }
  if (value !== null && typeof value === "object") {
    let changed = false;
    const entries = Object.entries(value).map(([key, item]): [string, unknown] => {
      const walked = filterStrings(filters, item, role, found);
      if (walked !== item) changed = true;
      return [key, walked];
    });
    return changed ? Object.fromEntries(entries) : value;
  }
  return value;
}

/**
 * Scans JSON text (a tool call's arguments, a replayed call's result) by its string leaves, so a label never
 * breaks the JSON; text that is not JSON is scanned whole. The same string when nothing was redacted.
 */
export function filterJsonText(filters: CompiledFilters, text: string, role: "user" | "other", found: Finding[][]): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    const scanned = scanText(filters, text, role);
    found.push(scanned.findings);
    return scanned.text;
  }
  const walked = filterStrings(filters, parsed, role, found);
  return walked === parsed ? text : JSON.stringify(walked);
}
