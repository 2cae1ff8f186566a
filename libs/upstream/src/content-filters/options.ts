import type { Filtered } from "./messages.js";
import { mergeFindings, type CompiledFilters, type Finding } from "./scan.js";
import { filterStrings } from "./values.js";

/**
 * Scans `provider.options` (by provider slug; the values nested at every depth), whose strings a provider
 * receives beside the prompt: Whisper's `prompt`, a voice's `instructions`, a Gemini document's `title`.
 * They are the caller's text and are filtered as its prompt is. The same object when nothing was redacted.
 */
export function filterOptions<T extends Readonly<Record<string, unknown>>>(filters: CompiledFilters, options: T): Filtered<T> {
  if (filters.empty) return { value: options, findings: [] };
  const found: Finding[][] = [];
  const value = filterStrings(filters, options, "user", found) as T;
  return { value, findings: mergeFindings(found) };
}
