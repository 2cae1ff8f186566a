import { parsedWithinDepth } from "@switchyard/runtime";
import { scanText, type CompiledFilters, type Finding } from "./scan.js";

type Container = unknown[] | Record<string, unknown>;

/** An array or object being walked: its items (an object's values, in its keys' order) and what they became so far. */
interface Walk {
  value: Container;
  keys: string[] | undefined;
  items: unknown[];
  out: unknown[];
}

const isContainer = (value: unknown): value is Container => value !== null && typeof value === "object";

function open(value: Container): Walk {
  if (Array.isArray(value)) return { value, keys: undefined, items: value, out: [] };
  const keys = Object.keys(value);
  return { value, keys, items: keys.map((key) => value[key]), out: [] };
}

/** The walked array or object: the same instance when none of its items changed. */
function close(walk: Walk): unknown {
  if (walk.out.every((item, i) => item === walk.items[i])) return walk.value;
  return walk.keys ? Object.fromEntries(walk.keys.map((key, i) => [key, walk.out[i]])) : walk.out;
}

/**
 * Scans every string inside a JSON value, at every depth; object keys are names, not text, and stay as they
 * are. What scanning found is appended to `found`, strings in the order they are written. An array or
 * object nothing was redacted in is returned as the same instance, so untouched values keep their identity
 * (and their keys' order). The walk keeps its own stack, not the call stack, so no depth overflows it.
 */
export function filterStrings(filters: CompiledFilters, value: unknown, role: "user" | "other", found: Finding[][]): unknown {
  const leaf = (item: unknown): unknown => {
    if (typeof item !== "string") return item;
    const scanned = scanText(filters, item, role);
    found.push(scanned.findings);
    return scanned.text;
  };
  if (!isContainer(value)) return leaf(value);
  const stack: Walk[] = [open(value)];
  for (;;) {
    const walk = stack[stack.length - 1]!;
    if (walk.out.length < walk.items.length) {
      const item = walk.items[walk.out.length];
      if (isContainer(item)) stack.push(open(item));
      else walk.out.push(leaf(item));
      continue;
    }
    stack.pop();
    const done = close(walk);
    const parent = stack[stack.length - 1];
    if (!parent) return done;
    parent.out.push(done);
  }
}

/**
 * Scans JSON text (a tool call's arguments, a replayed call's result) by its string leaves, so a label never
 * breaks the JSON; text that is not JSON, or nests too deep to be parsed, is scanned whole. The same string
 * when nothing was redacted.
 */
export function filterJsonText(filters: CompiledFilters, text: string, role: "user" | "other", found: Finding[][]): string {
  // Deeper text than a request's input may hold (a provider's own calls, which no request check reads) is
  // scanned whole: writing it back as JSON after a redaction would overflow the stack.
  const parsed = parsedWithinDepth(text);
  if (!parsed) {
    const scanned = scanText(filters, text, role);
    found.push(scanned.findings);
    return scanned.text;
  }
  const walked = filterStrings(filters, parsed.value, role, found);
  return walked === parsed.value ? text : JSON.stringify(walked);
}
