/**
 * Checks every request input (a JSON body, a query, multipart fields) gets before its schema, in one pass
 * that needs no stack: its nesting depth and its text.
 *
 * Depth: JSON nested thousands of levels deep parses fine, but whatever walks it recursively afterwards
 * (serializing it for a provider, a JSON Schema converter) overflows the stack far from the request, where
 * the failure looks like someone else's. No field of the API nests anywhere near this deep; a tool's JSON
 * Schema of 30 nested objects is about 64 levels.
 *
 * NUL (U+0000): PostgreSQL's text and jsonb cannot hold it, so a name, a label or a metadata value carrying
 * one fails only when it is written, as a 500. No field of the API needs it.
 */

/** Deepest nesting of objects and arrays an input may have. */
export const maxInputDepth = 64;

interface Frame {
  value: object;
  depth: number;
  parent: Frame | undefined;
  key: string;
}

/** Longest field path told in an error; a deep or long one keeps its start, which says where it is. */
const maxPathLength = 120;

/** A field's dotted path, cut to `maxPathLength` so the reason after it is always heard. */
export const shortPath = (path: string): string => (path.length > maxPathLength ? `${path.slice(0, maxPathLength - 1)}…` : path);

/** The dotted path of a frame (plus a last key), as zod errors name fields. */
function pathOf(frame: Frame | undefined, last?: string): string {
  const keys: string[] = last === undefined ? [] : [last];
  for (let at = frame; at?.parent; at = at.parent) keys.push(at.key);
  return shortPath(keys.reverse().join("."));
}

const nul = "\u0000";

/** Checks one member of an object or array: its text now, its members later (pushed on the stack). */
function visit(frame: Frame, key: string | number, item: unknown, stack: Frame[], where: string): string | undefined {
  if (typeof item === "string") {
    if (item.includes(nul)) return `${pathOf(frame, String(key)) || where}: must not contain NUL (U+0000) characters`;
  } else if (typeof item === "object" && item !== null) {
    stack.push({ value: item, depth: frame.depth + 1, parent: frame, key: String(key) });
  }
  return undefined;
}

/** Why the input cannot be validated (one line that names the field), or undefined when it can. */
export function inputProblem(value: unknown, where: string): string | undefined {
  if (typeof value === "string") return value.includes(nul) ? `${where}: must not contain NUL (U+0000) characters` : undefined;
  if (typeof value !== "object" || value === null) return undefined;
  const stack: Frame[] = [{ value, depth: 1, parent: undefined, key: "" }];
  for (let frame = stack.pop(); frame; frame = stack.pop()) {
    if (frame.depth > maxInputDepth) return `${pathOf(frame) || where}: nested deeper than ${maxInputDepth} levels`;
    if (Array.isArray(frame.value)) {
      const items = frame.value as unknown[];
      // An index loop: a body may hold a million items, and this pass must not allocate per item.
      for (let index = 0; index < items.length; index++) {
        const problem = visit(frame, index, items[index], stack, where);
        if (problem) return problem;
      }
      continue;
    }
    for (const [key, item] of Object.entries(frame.value)) {
      if (key.includes(nul)) return `${pathOf(frame) || where}: field names must not contain NUL (U+0000) characters`;
      const problem = visit(frame, key, item, stack, where);
      if (problem) return problem;
    }
  }
  return undefined;
}
