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
 * Width: an object of 100,000 fields (in metadata, a tool's schema, provider options) parses in tens of
 * milliseconds, but validating, filtering and sizing it field by field costs up to a second. No field of
 * the API needs near `maxObjectFields`: OpenAI allows 16 metadata pairs, 300 `logit_bias` entries and 5,000
 * properties in a whole structured-output schema. Counted in the same pass as depth, so the refusal costs
 * the scan.
 *
 * NUL (U+0000): PostgreSQL's text and jsonb cannot hold it, so a name, a label or a metadata value carrying
 * one fails only when it is written, as a 500. No field of the API needs it.
 */

/** Deepest nesting of objects and arrays an input may have. */
export const maxInputDepth = 64;

/** Most fields one object of an input may have (arrays may hold more items). */
export const maxObjectFields = 10_000;

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

const tooWide = `more than ${maxObjectFields} fields in one object`;

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
    const excess = holdsJsonText(frame, key) ? scan(item, maxObjectFields) : undefined;
    if (excess) return `${pathOf(frame, String(key)) || where}: ${excess.wide ? tooWide : tooDeep}`;
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
    const entries = Object.entries(frame.value);
    if (entries.length > maxObjectFields) return `${pathOf(frame) || where}: ${tooWide}`;
    for (const [key, item] of entries) {
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
 * current member's key is or its current item's index (an object's counts its members), to name the first
 * level too deep or too wide as `inputProblem` names it.
 */
class Levels {
  depth = 0;
  /** Whether the next string is a member's key. */
  keyNext = false;
  private readonly objects: boolean[] = [false];
  private readonly keyFrom: number[] = [0];
  private readonly keyTo: number[] = [0];
  private readonly indexes: number[] = [0];

  /** `maxFields`: the most members an object may have. */
  constructor(private readonly maxFields: number) {}

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

  /** The next member or item begins; false when it is past `maxFields` in its object. */
  comma(): boolean {
    const index = ++this.indexes[this.depth]!;
    this.keyNext = this.objects[this.depth]!;
    return !this.keyNext || index < this.maxFields;
  }

  /** A string at `[from, to)`, quotes included: the current member's key where one is due. */
  string(from: number, to: number): void {
    if (!this.keyNext) return;
    this.keyFrom[this.depth] = from;
    this.keyTo[this.depth] = to;
    this.keyNext = false;
  }

  /** The keys and indexes to the current level (or to `last`); `slice` gives a key's quoted text. */
  path(slice: (from: number, to: number) => string, last = this.depth): string[] {
    const path: string[] = [];
    for (let level = 1; level <= last; level++) {
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

/** Where JSON text first nests too deep or holds an object too wide: the path to it, and which it is. */
interface Excess {
  path: string[];
  wide: boolean;
}

function scanString(text: string, maxFields: number): Excess | undefined {
  const levels = new Levels(maxFields);
  const slice = (from: number, to: number) => text.slice(from, to);
  for (let at = 0; at < text.length; at++) {
    const code = text.charCodeAt(at);
    if (code > closeObject) continue;
    if (code === quote) {
      const end = quoteClosing(text, at);
      if (end === -1) return undefined;
      levels.string(at, end + 1);
      at = end;
    } else if (code === openObject || code === openArray) {
      if (!levels.open(code === openObject)) return { path: levels.path(slice), wide: false };
    } else if (code === closeObject || code === closeArray) {
      if (!levels.close()) return undefined;
    } else if (code === comma && !levels.comma()) return { path: levels.path(slice, levels.depth - 1), wide: true };
  }
  return undefined;
}

function scanBytes(bytes: Buffer, maxFields: number): Excess | undefined {
  const levels = new Levels(maxFields);
  const slice = (from: number, to: number) => bytes.toString("utf8", from, to);
  for (let at = 0; at < bytes.length; at++) {
    const code = bytes[at]!;
    if (code > closeObject) continue;
    if (code === quote) {
      const end = byteQuoteClosing(bytes, at);
      if (end === -1) return undefined;
      levels.string(at, end + 1);
      at = end;
    } else if (code === openObject || code === openArray) {
      if (!levels.open(code === openObject)) return { path: levels.path(slice), wide: false };
    } else if (code === closeObject || code === closeArray) {
      if (!levels.close()) return undefined;
    } else if (code === comma && !levels.comma()) return { path: levels.path(slice, levels.depth - 1), wide: true };
  }
  return undefined;
}

/**
 * Where JSON text (a string, or its UTF-8 bytes) first nests deeper than `maxInputDepth` or holds an object
 * of more than `maxFields` members, or undefined when it does neither. One pass over the text that counts
 * brackets and commas outside strings, with no parse and no stack, and that stops at the first excess: 0.08 ms
 * for a 256 KB conversation, whose parse takes 0.6 ms. JSON escapes and UTF-8 sequences never hold a quote,
 * a bracket or a comma byte, so strings are skipped from quote to quote. Text that is not JSON is measured
 * the same way; when it is within the limits, the parse that follows refuses it.
 */
const scan = (text: string | Buffer, maxFields: number): Excess | undefined =>
  typeof text === "string" ? scanString(text, maxFields) : scanBytes(text, maxFields);

/**
 * The keys and indexes leading to the first object or array of JSON text nested deeper than
 * `maxInputDepth`, or undefined when none is (objects of every width pass).
 */
export const deepestPath = (text: string | Buffer): string[] | undefined => scan(text, Infinity)?.path;

/**
 * Why JSON text cannot be read (nested deeper than `maxInputDepth`, or an object of more than
 * `maxObjectFields` fields), named as `inputProblem` names it, or undefined when it can. Checked on a body's
 * text before it is parsed: the refusal then costs a scan of a few bytes where parsing and walking the value
 * cost over a second.
 */
export function textProblem(text: string | Buffer, where: string): string | undefined {
  const excess = scan(text, maxObjectFields);
  return excess === undefined ? undefined : `${shortPath(excess.path.join(".")) || where}: ${excess.wide ? tooWide : tooDeep}`;
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
