import { isContainer, keepText, textGroups, type Span } from "./verbatim.js";

/**
 * V8 keeps a string of more than 128 KB (an object above its largest regular size) in pages of its own,
 * mapped for it and unmapped when it is collected. On the development VM a 132 KB string cost 210 µs to
 * make against 13 µs for a 127 KB one, nearly all of it page faults. Parsing a 256 KB chat body and writing
 * it again cost 1.15 ms in a loop as one string each way, 0.69 ms in pieces. So large JSON is read and
 * written in pieces of at most `pieceSize` bytes or characters: ordinary strings even when they hold
 * characters beyond Latin-1 (two bytes each).
 */
const pieceSize = 60 * 1024;

/**
 * What a piece of written JSON is sized for ahead, in characters counted without escapes: below `pieceSize`,
 * so that text with escapes still fits (a piece that does not is written again in halves).
 */
const pieceTarget = 40 * 1024;

/**
 * How a conversation item starts: a chat, Messages or Responses message whose first member is `role`; or
 * a Responses item whose first member is its `type` (as Codex sends them), cut where a message or a
 * function call (or its output) starts. A content part inside an item (`{"type":"input_text"`) is neither.
 */
const roleFirst = [Buffer.from('{"role":', "latin1")];
const typeFirst = [Buffer.from('{"type":"message"', "latin1"), Buffer.from('{"type":"function_call', "latin1")];
const longestStart = typeFirst[1]!.length;

/**
 * Where an item starts in `[from, to]`, the first or the last; -1 when none does. Searched within those
 * bytes only: a search that finds nothing reads all it is given (70 µs for 256 KB of JSON).
 */
function itemIn(bytes: Buffer, starts: readonly Buffer[], from: number, to: number, which: "first" | "last"): number {
  const window = bytes.subarray(from, to + longestStart);
  let found = -1;
  for (const start of starts) {
    const at = which === "first" ? window.indexOf(start) : window.lastIndexOf(start);
    if (at !== -1 && (found === -1 || (which === "first" ? at < found : at > found))) found = at;
  }
  return found === -1 ? -1 : from + found;
}

/** The longest text before the first item that is read to find which member opens the array. */
const headLimit = 16 * 1024;

const space = (byte: number | undefined) => byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;

/**
 * The name of the top-level member whose array `bytes[0, end)` leaves open with nothing in it yet, as in
 * `{"model":"m","messages":[`; undefined for text that ends otherwise. It tracks strings and brackets only,
 * so its answer holds for valid JSON; the caller parses this text with what follows before it trusts it.
 */
function openArrayMember(bytes: Buffer, end: number): string | undefined {
  let last = end - 1;
  while (space(bytes[last])) last--;
  let first = 0;
  while (space(bytes[first])) first++;
  if (bytes[last] !== 0x5b || bytes[first] !== 0x7b) return undefined;
  let depth = 0;
  let name: [number, number] | undefined;
  for (let i = first; i < last; i++) {
    const byte = bytes[i];
    if (byte === 0x22) {
      const from = i;
      for (i++; i < last && bytes[i] !== 0x22; i++) if (bytes[i] === 0x5c) i++;
      if (i >= last) return undefined;
      if (depth === 1) name = [from, i + 1];
    } else if (byte === 0x7b || byte === 0x5b) depth++;
    else if (byte === 0x7d || byte === 0x5d) depth--;
  }
  if (depth !== 1 || name === undefined) return undefined;
  const member = JSON.parse(bytes.toString("utf8", name[0], name[1])) as string;
  // Assigning `__proto__` would set the prototype, where the parse made a member.
  return member === "__proto__" ? undefined : member;
}

/**
 * Whether `text` may hold a member named `name`: it holds the name in quotes, or a `\u` escape that could
 * spell it another way. A name of letters, digits and underscores has no other spelling (JSON escapes no
 * other character of theirs); for other names the answer is always yes.
 */
function mayName(text: Buffer, name: string): boolean {
  return !/^\w+$/.test(name) || text.includes(`"${name}"`) || text.includes("\\u");
}

/**
 * A body whose bulk is an array of conversation items at its top level (`messages`, `input`), parsed in
 * parts: the items from the first to the last in groups of at most `pieceSize` bytes (a larger item is a
 * group of its own), and the text before the first item with the text from the last one on. Undefined when
 * the body is not of that shape or a part does not parse; the caller then parses the text whole, which also
 * throws the error `JSON.parse` throws.
 *
 * The parts make the value the whole text makes. `{"role":` (and each other start) can only open an object:
 * inside a JSON string a quote is escaped, and a string's closing quote is followed by `,` `:` `]` `}` or
 * space, never a letter. A cut inside an item leaves a group that does not parse.
 * The text before the first item opens an array as a top-level member; each group is items and commas that
 * parse as an array's contents; the head with the tail parses. So the whole text parses, to the head and
 * tail's value with the groups' items first in that member's array, unless a later member of the same name
 * replaces the array: where the tail may name it, the head and tail are parsed a second time with one more
 * item to see that it does not.
 */
function parsedInPieces(bytes: Buffer): unknown {
  const first = itemIn(bytes, [...roleFirst, ...typeFirst], 0, headLimit, "first");
  if (first === -1) return undefined;
  // The items are cut where items of the first one's kind start.
  const starts = bytes[first + 2] === 0x72 ? roleFirst : typeFirst;
  const member = openArrayMember(bytes, first);
  const last = itemIn(bytes, starts, first, bytes.length, "last");
  if (member === undefined || last === first) return undefined;
  const items: unknown[] = [];
  const spans: Span[] = [];
  try {
    for (let from = first; from < last; ) {
      let to = last - from <= pieceSize ? last : itemIn(bytes, starts, from + 1, from + pieceSize, "last");
      if (to === -1) to = itemIn(bytes, starts, from + 1, last, "first");
      let end = to - 1;
      while (space(bytes[end])) end--;
      let open = from - 1;
      while (space(bytes[open])) open--;
      if (bytes[end] !== 0x2c) return undefined;
      // The byte before the group (the array's `[` or a comma) as `[` and the comma after it as `]` make
      // the group an array's text, decoded without a copy to add brackets; both are put back at once.
      const before = bytes[open]!;
      bytes[open] = 0x5b;
      bytes[end] = 0x5d;
      const group = bytes.toString("utf8", open, end + 1);
      bytes[open] = before;
      bytes[end] = 0x2c;
      const start = items.length;
      for (const item of JSON.parse(group) as unknown[]) items.push(item);
      spans.push({ from: start, to: items.length, text: group, start: open + 1, end });
      from = to;
    }
    const head = bytes.toString("utf8", 0, first);
    const tail = bytes.toString("utf8", last);
    const value = JSON.parse(head + tail) as Record<string, unknown>;
    const array = value[member];
    if (!Array.isArray(array)) return undefined;
    if (mayName(bytes.subarray(last), member)) {
      const probed = (JSON.parse(`${head}0,${tail}`) as Record<string, unknown>)[member];
      if (!Array.isArray(probed) || probed.length !== array.length + 1) return undefined;
    }
    for (const item of array) items.push(item);
    value[member] = items;
    keepText(items, spans, bytes);
    return value;
  } catch {
    return undefined;
  }
}

/**
 * UTF-8 JSON text parsed as `JSON.parse` parses its decoded text: the same value, the same SyntaxError.
 * Text longer than `pieceSize` is parsed in parts where it can be (a conversation), so that no string of it
 * is large; that changes two bytes of it for a moment, so the bytes must be the caller's own. The items
 * parsed in parts are then frozen and their text kept, for `jsonBody` to write them from it (`verbatim.ts`).
 */
export function parseJsonBytes(bytes: Buffer): unknown {
  if (bytes.length > pieceSize) {
    const value = parsedInPieces(bytes);
    if (value !== undefined) return value;
  }
  return JSON.parse(bytes.toString("utf8"));
}

/** What JSON is written in: text made here, or the client's own bytes of items it sent (`verbatim.ts`). */
type Piece = string | Buffer;

/** The length in characters of `value`'s JSON (escapes aside), counted until it passes `limit`. */
function charsOf(value: unknown, limit: number): number {
  if (typeof value === "string") return value.length + 2;
  if (!isContainer(value)) return 8;
  let total = 2;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length && total <= limit; i++) total += 1 + charsOf(value[i], limit - total);
    return total;
  }
  for (const key of Object.keys(value)) {
    total += key.length + 4 + charsOf((value as Record<string, unknown>)[key], limit - total);
    if (total > limit) break;
  }
  return total;
}

const big = (value: unknown): value is object => isContainer(value) && charsOf(value, pieceTarget) > pieceTarget;

/**
 * Items `[from, to)` of an array as JSON without the brackets: one piece, or where that comes out longer
 * than `pieceSize` (escapes are not counted ahead), each half of them; one item too long alone is written in
 * its own pieces, or as one when it is a string.
 */
function writeItems(items: unknown[], from: number, to: number, out: Piece[]): void {
  if (to - from === 1 && big(items[from])) return writePieces(items[from], out);
  const text = JSON.stringify(items.slice(from, to));
  if (text.length <= pieceSize || (to - from === 1 && !isContainer(items[from]))) return void out.push(text.slice(1, -1));
  if (to - from === 1) return writePieces(items[from] as object, out);
  const middle = (from + to) >>> 1;
  writeItems(items, from, middle, out);
  out.push(",");
  writeItems(items, middle, to, out);
}

/** The JSON of an object or array whose text is longer than `pieceSize`, as pieces that are each shorter where its values allow. */
function writePieces(value: object, out: Piece[]): void {
  if (Array.isArray(value)) {
    const items = value as unknown[];
    const texts = textGroups(items);
    out.push("[");
    let from = 0;
    let size = 0;
    const group = (to: number) => {
      if (to > from) {
        if (from > 0) out.push(",");
        writeItems(items, from, to, out);
      }
      from = to;
      size = 0;
    };
    for (let i = 0; i < items.length; ) {
      const text = texts[0];
      if (text?.from === i) {
        // Items still as the client wrote them are written from its text.
        group(i);
        if (i > 0) out.push(",");
        out.push(text.text);
        texts.shift();
        from = i = text.to;
        continue;
      }
      const chars = charsOf(items[i], pieceTarget);
      if (size + chars > pieceTarget) group(i);
      size += chars + 1;
      i++;
    }
    group(items.length);
    return void out.push("]");
  }
  out.push("{");
  let comma = false;
  for (const key of Object.keys(value)) {
    const member: unknown = (value as Record<string, unknown>)[key];
    const text = big(member) ? undefined : (JSON.stringify(member) as string | undefined);
    if (text === undefined && !isContainer(member)) continue;
    if (comma) out.push(",");
    comma = true;
    if (text !== undefined && (text.length <= pieceSize || !isContainer(member))) out.push(`${JSON.stringify(key)}:${text}`);
    else {
      out.push(`${JSON.stringify(key)}:`);
      writePieces(member as object, out);
    }
  }
  out.push("}");
}

/**
 * `JSON.stringify(value)` for a request body: the string when it is small; for a large object or array its
 * UTF-8 bytes, written from pieces so that no string of it is large (see `pieceSize`).
 */
export function jsonBody(value: unknown): string | Buffer {
  if (!big(value)) return JSON.stringify(value);
  const pieces: Piece[] = [];
  writePieces(value, pieces);
  const lengths = pieces.map((piece) => (typeof piece === "string" ? Buffer.byteLength(piece) : piece.length));
  const bytes = Buffer.allocUnsafe(lengths.reduce((sum, length) => sum + length, 0));
  let at = 0;
  // A piece whose byte length equals its length is ASCII, which is written byte for byte rather than encoded.
  pieces.forEach((piece, i) => {
    at += typeof piece === "string" ? bytes.write(piece, at, lengths[i] === piece.length ? "latin1" : "utf8") : piece.copy(bytes, at);
  });
  return bytes;
}
