import type { ContentFilterBuiltinSlug } from "@switchyard/contracts";
import { RE2JS } from "re2js";
import { detectors } from "./detectors.js";
import { ScanText, type Detector, type Span } from "./text.js";

export type FilterAction = "block" | "redact" | "flag";

/** One filter of one guardrail as stored: a builtin or a workspace pattern. */
export type FilterRule =
  | {
      guardrailId: string;
      kind: "builtin";
      slug: ContentFilterBuiltinSlug;
      action: FilterAction;
      label: string;
      scanScope?: "user_only" | "all_messages";
    }
  | {
      guardrailId: string;
      kind: "pattern";
      pattern: string;
      action: FilterAction;
      label: string | null;
      /** The pattern's index in its guardrail's content_filters; when left out, its position among that guardrail's patterns here. */
      index?: number;
    };

/**
 * What matched: never the matched text itself. `filter` is the builtin slug, or `pattern:<n>` (the pattern's
 * index in its guardrail's content_filters).
 */
export interface Finding {
  guardrailId: string;
  filter: string;
  action: FilterAction;
  label: string;
  count: number;
}

/** A pattern that does not compile on re2js: it matches nothing. */
export interface PatternProblem {
  guardrailId: string;
  filter: string;
  reason: string;
}

export interface CompiledFilters {
  readonly empty: boolean;
  /** Patterns left out because re2js refuses them (stored before they were checked); empty as a rule. */
  readonly problems: readonly PatternProblem[];
}

interface Filter {
  detect: Detector;
  guardrailId: string;
  filter: string;
  action: FilterAction;
  label: string;
}

interface Compiled extends CompiledFilters {
  /** Filters of the caller's own messages, and of system, assistant and tool text. */
  readonly user: readonly Filter[];
  readonly other: readonly Filter[];
}

/** The placeholder of a pattern without a label. */
export const defaultPatternLabel = "[REDACTED]";

const severity: Record<FilterAction, number> = { flag: 0, redact: 1, block: 2 };

/**
 * Runs a re2js pattern: `test` first (its DFA, no capture bookkeeping), the matcher only on a hit. A pattern
 * in a gate is skipped when the gate (all such patterns as one alternation) does not match the text.
 */
function patternDetector(re: RE2JS, gate: RE2JS | undefined): Detector {
  return (scan, found) => {
    if (gate && !scan.once(gate, () => gate.test(scan.text))) return;
    if (!re.test(scan.text)) return;
    const m = re.matcher(scan.text);
    while (m.find()) {
      const start = m.start();
      const end = m.end();
      if (end > start) found.push({ start, end });
    }
  };
}

/**
 * One re2js pass over a text costs about the same for one pattern as for an alternation of several, unless
 * re2js can skip ahead to a literal every match must contain (its prefilter: "acct_" in `acct_[0-9a-f]+`,
 * not case-insensitive text). Patterns without one are tested together first; a pattern with `\Q` (which
 * quotes to its end, past a wrapping group) stays alone.
 */
function gateOf<P extends { pattern: string; re: RE2JS }>(patterns: readonly P[]): { gate: RE2JS; members: Set<P> } | undefined {
  const slow = patterns.filter((p) => !p.re.re2().prefilter && !p.pattern.includes("\\Q"));
  if (slow.length < 2) return undefined;
  try {
    return { gate: RE2JS.compile(slow.map((p) => `(?:${p.pattern})`).join("|")), members: new Set(slow) };
  } catch {
    return undefined;
  }
}

/** Why re2js refuses a pattern, shortened; undefined when it compiles. */
export function patternProblem(pattern: string): string | undefined {
  try {
    RE2JS.compile(pattern);
    return undefined;
  } catch (error) {
    if (/\(\?<[=!]/.test(pattern)) return "lookbehind is not supported";
    if (/\(\?[=!]/.test(pattern)) return "lookahead is not supported";
    if (/\\[1-9]|\\k</.test(pattern)) return "backreferences are not supported";
    if (/[*+?}][+]/.test(pattern)) return "possessive quantifiers are not supported";
    const message = error instanceof Error ? error.message : String(error);
    return message.replace(/^error parsing regexp:\s*/, "").slice(0, 200);
  }
}

function compileUncached(rules: readonly FilterRule[]): Compiled {
  const problems: PatternProblem[] = [];
  const compiled: { rule: Extract<FilterRule, { kind: "pattern" }>; filter: string; pattern: string; re: RE2JS }[] = [];
  const patternCount = new Map<string, number>();
  for (const rule of rules) {
    if (rule.kind !== "pattern") continue;
    const position = patternCount.get(rule.guardrailId) ?? 0;
    patternCount.set(rule.guardrailId, position + 1);
    const filter = `pattern:${rule.index ?? position}`;
    try {
      compiled.push({ rule, filter, pattern: rule.pattern, re: RE2JS.compile(rule.pattern) });
    } catch {
      problems.push({ guardrailId: rule.guardrailId, filter, reason: patternProblem(rule.pattern) ?? "does not compile" });
    }
  }
  const gate = gateOf(compiled);
  const patterns: Filter[] = compiled.map((p) => ({
    detect: patternDetector(p.re, gate?.members.has(p) ? gate.gate : undefined),
    guardrailId: p.rule.guardrailId,
    filter: p.filter,
    action: p.rule.action,
    label: p.rule.label ?? defaultPatternLabel,
  }));
  const builtins = (role: "user" | "other"): Filter[] => {
    const winners = new Map<ContentFilterBuiltinSlug, Extract<FilterRule, { kind: "builtin" }>>();
    for (const rule of rules) {
      if (rule.kind !== "builtin" || (role === "other" && rule.scanScope === "user_only")) continue;
      const current = winners.get(rule.slug);
      if (!current || severity[rule.action] > severity[current.action]) winners.set(rule.slug, rule);
    }
    return [...winners.values()].map((r) => ({
      detect: detectors[r.slug],
      guardrailId: r.guardrailId,
      filter: r.slug,
      action: r.action,
      label: r.label,
    }));
  };
  const user = [...builtins("user"), ...patterns];
  return { empty: user.length === 0, problems, user, other: [...builtins("other"), ...patterns] };
}

const cacheLimit = 1000;
const cache = new Map<string, Compiled>();
const none: Compiled = { empty: true, problems: [], user: [], other: [] };

/**
 * Compiles a rule set: for each builtin slug the most restrictive rule wins (block > redact > flag), per
 * role, since a `user_only` rule does not apply to other text; every pattern is kept. Compiled sets are
 * cached by their rules (the 1000 used last).
 */
export function compileFilters(rules: readonly FilterRule[]): CompiledFilters {
  if (rules.length === 0) return none;
  const key = JSON.stringify(rules);
  let compiled = cache.get(key);
  if (compiled) {
    cache.delete(key);
  } else {
    compiled = compileUncached(rules);
    if (cache.size >= cacheLimit) cache.delete(cache.keys().next().value!);
  }
  cache.set(key, compiled);
  return compiled;
}

/**
 * The spans one detector found; one array for every scan (scans are synchronous), so detectors always see an
 * array of the same kind and V8 keeps their optimised code.
 */
const found: Span[] = [];

interface Redaction extends Span {
  label: string;
}

/** Replaces spans by their labels; of overlapping spans the one starting first (then the longer) is kept. */
function redact(text: string, spans: Redaction[]): string {
  spans.sort((a, b) => a.start - b.start || b.end - a.end);
  let out = "";
  let at = 0;
  for (const s of spans) {
    if (s.start < at) continue;
    out += text.slice(at, s.start) + s.label;
    at = s.end;
  }
  return out + text.slice(at);
}

/**
 * Scans one string. role "user" = the caller's own message/prompt; "other" = system/assistant/tool text
 * (a builtin with scanScope "user_only" skips it). Every filter that matched is reported with its count;
 * "redact" matches are replaced by their label, "flag" and "block" matches leave the text as it is (the
 * caller refuses a request with a block finding). Returns the same string instance when nothing was redacted.
 */
export function scanText(filters: CompiledFilters, text: string, role: "user" | "other"): { text: string; findings: Finding[] } {
  if (filters.empty || text.length === 0) return { text, findings: [] };
  const compiled = filters as Compiled;
  const list = role === "user" ? compiled.user : compiled.other;
  const findings: Finding[] = [];
  let redactions: Redaction[] | undefined;
  const scan = new ScanText(text);
  for (const f of list) {
    found.length = 0;
    f.detect(scan, found);
    if (found.length === 0) continue;
    findings.push({ guardrailId: f.guardrailId, filter: f.filter, action: f.action, label: f.label, count: found.length });
    if (f.action !== "redact") continue;
    redactions ??= [];
    for (const s of found) redactions.push({ start: s.start, end: s.end, label: f.label });
  }
  return { text: redactions ? redact(text, redactions) : text, findings };
}

/** Findings of several scanText calls as one list: counts of the same guardrail, filter and action summed. */
export function mergeFindings(lists: readonly Finding[][]): Finding[] {
  const merged = new Map<string, Finding>();
  for (const list of lists) {
    for (const f of list) {
      const key = `${f.guardrailId}\u0000${f.filter}\u0000${f.action}`;
      const seen = merged.get(key);
      if (seen) seen.count += f.count;
      else merged.set(key, { ...f });
    }
  }
  return [...merged.values()];
}
