import { serverToolCallType } from "@switchyard/contracts";

/**
 * Checks every request input (a JSON body, a query, multipart fields) gets before its schema, in one pass
 * that needs no stack: its nesting depth and its text.
 *
 * Depth: JSON nested thousands of levels deep parses fine, but whatever walks it recursively afterwards
 * (serializing it for a provider, a JSON Schema converter) overflows the stack far from the request, where
 * the failure looks like someone else's. No field of the API nests anywhere near this deep; a tool's JSON
 * Schema of 30 nested objects is about 64 levels. The same limit holds for JSON text the gateway parses out
 * of a string (a tool call's arguments), and a body's text is measured before it is parsed (`textProblem`):
 * parsing and walking a body a million levels deep takes over a second in which the event loop serves no
 * other request.
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

const tooDeep = `nested deeper than ${maxInputDepth} levels`;

/**
 * Whether a member's string is JSON text the gateway parses: a tool call's `arguments` (chat's, a Responses
 * `function_call` item's, a server call's) and a server call's `result` sent back in `reasoning_details`.
 */
const holdsJsonText = (frame: Frame, key: string | number): boolean =>
  key === "arguments" || (key === "result" && (frame.value as { type?: unknown }).type === serverToolCallType);

/** Checks one member of an object or array: its text now, its members later (pushed on the stack). */
function visit(frame: Frame, key: string | number, item: unknown, stack: Frame[], where: string): string | undefined {
  if (typeof item === "string") {
    if (item.includes(nul)) return `${pathOf(frame, String(key)) || where}: must not contain NUL (U+0000) characters`;
    if (holdsJsonText(frame, key) && deepestPath(item) !== undefined) return `${pathOf(frame, String(key)) || where}: ${tooDeep}`;
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
    if (frame.depth > maxInputDepth) return `${pathOf(frame) || where}: ${tooDeep}`;
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

const quote = 0x22;
const backslash = 0x5c;
const comma = 0x2c;
const openObject = 0x7b;
const openArray = 0x5b;
const closeObject = 0x7d;
const closeArray = 0x5d;

/**
 * The levels of JSON text read so far, up to `maxInputDepth`: whether each is an object, and where its
 * current member's key is or its current item's index, to name the first level too deep as `inputProblem`
 * names it.
 */
class Levels {
  depth = 0;
  /** Whether the next string is a member's key. */
  keyNext = false;
  private readonly objects: boolean[] = [false];
  private readonly keyFrom: number[] = [0];
  private readonly keyTo: number[] = [0];
  private readonly indexes: number[] = [0];

  /** An object or array opens; false when it is one level too deep. */
  open(object: boolean): boolean {
    if (this.depth === maxInputDepth) return false;
    const depth = ++this.depth;
    this.objects[depth] = object;
    this.keyFrom[depth] = this.keyTo[depth] = this.indexes[depth] = 0;
    this.keyNext = object;
    return true;
  }

  /** An object or array closes; false when none was open. */
  close(): boolean {
    this.keyNext = false;
    return this.depth-- > 0;
  }

  comma(): void {
    this.keyNext = this.objects[this.depth]!;
    if (!this.keyNext) this.indexes[this.depth]!++;
  }

  /** A string at `[from, to)`, quotes included: the current member's key where one is due. */
  string(from: number, to: number): void {
    if (!this.keyNext) return;
    this.keyFrom[this.depth] = from;
    this.keyTo[this.depth] = to;
    this.keyNext = false;
  }

  /** The keys and indexes to the current level; `slice` gives a key's quoted text. */
  path(slice: (from: number, to: number) => string): string[] {
    const path: string[] = [];
    for (let level = 1; level <= this.depth; level++) {
      if (!this.objects[level]) {
        path.push(String(this.indexes[level]));
        continue;
      }
      const quoted = slice(this.keyFrom[level]!, this.keyTo[level]!);
      try {
        path.push(String(JSON.parse(quoted)));
      } catch {
        path.push(quoted);
      }
    }
    return path;
  }
}

/*
 * The same scan over a string and over bytes, written twice so that each loop reads one kind of text: one
 * loop for both ran three times slower. A quote is escaped by an odd run of backslashes before it (an even
 * run escapes itself).
 */

/** The index of the quote that closes the string opened at `open`, or -1 when none does. */
function quoteClosing(text: string, open: number): number {
  for (let end = text.indexOf('"', open + 1); end !== -1; end = text.indexOf('"', end + 1)) {
    let before = end - 1;
    while (text.charCodeAt(before) === backslash) before--;
    if ((end - 1 - before) % 2 === 0) return end;
  }
  return -1;
}

/**
 * The index of the quote that closes the string opened at `open`, or -1 when none does. The next 32 bytes
 * are read here and the rest searched natively: a search costs a call into C++, which for text dense with
 * escaped quotes (JSON inside a string) made the scan of 8 MB take 36 ms instead of 15.
 */
function byteQuoteClosing(bytes: Buffer, open: number): number {
  let at = open + 1;
  for (;;) {
    const stop = Math.min(at + 32, bytes.length);
    for (; at < stop; at++) {
      const code = bytes[at];
      if (code === quote) return at;
      if (code === backslash) at++;
    }
    const end = at < bytes.length ? bytes.indexOf(quote, at) : -1;
    if (end === -1) return -1;
    let before = end - 1;
    while (bytes[before] === backslash) before--;
    if ((end - 1 - before) % 2 === 0) return end;
    at = end + 1;
  }
}

function scanString(text: string): string[] | undefined {
  const levels = new Levels();
  for (let at = 0; at < text.length; at++) {
    const code = text.charCodeAt(at);
    if (code > closeObject) continue;
    if (code === quote) {
      const end = quoteClosing(text, at);
      if (end === -1) return undefined;
      levels.string(at, end + 1);
      at = end;
    } else if (code === openObject || code === openArray) {
      if (!levels.open(code === openObject)) return levels.path((from, to) => text.slice(from, to));
    } else if (code === closeObject || code === closeArray) {
      if (!levels.close()) return undefined;
    } else if (code === comma) levels.comma();
  }
  return undefined;
}

function scanBytes(bytes: Buffer): string[] | undefined {
  const levels = new Levels();
  for (let at = 0; at < bytes.length; at++) {
    const code = bytes[at]!;
    if (code > closeObject) continue;
    if (code === quote) {
      const end = byteQuoteClosing(bytes, at);
      if (end === -1) return undefined;
      levels.string(at, end + 1);
      at = end;
    } else if (code === openObject || code === openArray) {
      if (!levels.open(code === openObject)) return levels.path((from, to) => bytes.toString("utf8", from, to));
    } else if (code === closeObject || code === closeArray) {
      if (!levels.close()) return undefined;
    } else if (code === comma) levels.comma();
  }
  return undefined;
}

/**
 * The keys and indexes leading to the first object or array of JSON text (a string, or its UTF-8 bytes)
 * nested deeper than `maxInputDepth`, or undefined when none is. One pass over the text that counts
 * brackets outside strings, with no parse and no stack, and that stops at the first level too deep: 0.06 ms
 * for a 256 KB conversation, whose parse takes 1.7 ms. JSON escapes and UTF-8 sequences never hold a quote or a
 * bracket byte, so strings are skipped from quote to quote. Text that is not JSON is measured the same way;
 * when it is not too deep, the parse that follows refuses it.
 */
export const deepestPath = (text: string | Buffer): string[] | undefined => (typeof text === "string" ? scanString(text) : scanBytes(text));

/**
 * Why JSON text cannot be read (nested deeper than `maxInputDepth`), named as `inputProblem` names it, or
 * undefined when it can. Checked on a body's text before it is parsed: the refusal then costs a scan of a
 * few bytes where parsing and walking the value cost over a second.
 */
export function textProblem(text: string | Buffer, where: string): string | undefined {
  const path = deepestPath(text);
  return path === undefined ? undefined : `${shortPath(path.join(".")) || where}: ${tooDeep}`;
}

/**
 * The value JSON text holds, or undefined when it is no JSON or nests deeper than `maxInputDepth`: for JSON
 * the gateway parses out of a string (a tool call's arguments, a tool's result), whose value is walked or
 * written as JSON again afterwards, which that deep would overflow the stack.
 */
export function parsedWithinDepth(text: string): { value: unknown } | undefined {
  if (deepestPath(text) !== undefined) return undefined;
  try {
    return { value: JSON.parse(text) as unknown };
  } catch {
    return undefined;
  }
}
