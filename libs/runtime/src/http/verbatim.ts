import { isUtf8 } from "node:buffer";

/**
 * The client's own text of a large body's conversation items, kept so that a body sent on with the same
 * items is written from it instead of serialising the items again (0.64 ms for a 256 KB conversation on
 * the development VM; comparing the items to find that they are unchanged takes 15 µs).
 *
 * A group is items `[from, to)` of a parsed array whose JSON text, without the brackets, was copied into
 * the ring (below) at `at`. The items are frozen, nested values included, so an item that is still in its place is
 * still what its text says; a copy (a validation's output, an item rebuilt by a filter) is compared with it
 * when it is written.
 */
interface KeptGroup {
  from: number;
  to: number;
  at: number;
  length: number;
}

/**
 * A group as parsed: items `[from, to)` of the array, `text` the JSON array they were parsed from, and the
 * parsed bytes `[start, end)` of that text without its brackets.
 */
export interface Span {
  from: number;
  to: number;
  text: string;
  start: number;
  end: number;
}

interface Source {
  items: readonly unknown[];
  groups: readonly KeptGroup[];
}

/**
 * Where kept text is copied: memory reused in turn, from its start again once full. A group's text stays
 * there until `ringSize` bytes more have been kept; a body written after that (a fallback sent again
 * after that much more traffic) is serialised as it would have been. Text kept in strings or in a buffer
 * per request cost more than it saved: strings in the young generation's collections, and a fresh large
 * buffer in Node 24's full collections, which external memory brings on there.
 */
const ringSize = 4 * 1024 * 1024;
let ring: Buffer | undefined;
/** The bytes copied in so far, gaps included: where the next group goes, counted from the first. */
let written = 0;

function copied(bytes: Buffer): number {
  ring ??= Buffer.allocUnsafeSlow(ringSize);
  let at = written;
  // A group is never split: one that does not fit before the end starts at the beginning.
  if ((at % ringSize) + bytes.length > ringSize) at += ringSize - (at % ringSize);
  bytes.copy(ring, at % ringSize);
  written = at + bytes.length;
  return at;
}

/** The bytes of a kept group, while no later group has been copied over them. */
const textOf = (group: KeptGroup): Buffer | undefined =>
  written - group.at <= ringSize ? ring!.subarray(group.at % ringSize, (group.at % ringSize) + group.length) : undefined;

/** Where an array keeps its source: a property no JSON, key listing or spread sees (a WeakMap cost more in garbage collection). */
const kept = Symbol("verbatim source");

const keep = (array: unknown[], source: Source) => Object.defineProperty(array, kept, { value: source });
const sourceOf = (array: readonly unknown[]) => (array as { [kept]?: Source })[kept];

const quotesIn = (text: string): number => {
  let count = 0;
  for (let at = text.indexOf('"'); at !== -1; at = text.indexOf('"', at + 1)) count++;
  return count;
};

/**
 * Freezes `value`, nested values included, and counts the quotes of its JSON: two for each name and string,
 * and one for each quote in them (written `\"`).
 */
function frozenQuotes(value: unknown): number {
  if (typeof value === "string") return 2 + quotesIn(value);
  if (typeof value !== "object" || value === null) return 0;
  Object.freeze(value);
  let quotes = 0;
  if (Array.isArray(value)) for (const item of value) quotes += frozenQuotes(item);
  // A parsed object has no prototype members to list.
  else for (const name in value) quotes += 2 + quotesIn(name) + frozenQuotes((value as Record<string, unknown>)[name]);
  return quotes;
}

/**
 * Keeps the text of `array`'s items in `spans`, and freezes those items. A group's text is kept only when it
 * holds exactly the quotes its items' JSON has. A member named twice in an object (which the parse reads as
 * its last) has quotes its items lack, and a provider that reads the first would read another request than
 * the gateway checked and priced; such a group, and one with a quote written `\u0022` (which the count cannot
 * see), is written from its items instead; so is text that is not UTF-8 (its items hold the replacement
 * character where the bytes were broken), and a group of more than a quarter of the ring.
 */
export function keepText(array: unknown[], spans: readonly Span[], bytes: Buffer): void {
  const groups: KeptGroup[] = [];
  for (const { from, to, text, start, end } of spans) {
    let quotes = 0;
    for (let i = from; i < to; i++) quotes += frozenQuotes(array[i]);
    const own = bytes.subarray(start, end);
    if (quotes !== quotesIn(text) || text.includes("\\u0022") || own.length > ringSize / 4 || !isUtf8(own)) continue;
    groups.push({ from, to, at: copied(own), length: own.length });
  }
  if (groups.length > 0) keep(array, { items: array.slice(), groups });
}

/**
 * Declares `copy` an array made from `source` item for item, such as a schema's output of it. Writing `copy`
 * then uses the text of the items of `source` that it still equals. Sources without kept text, and copies that
 * cannot take a property (frozen), are ignored.
 */
export function madeFrom(copy: unknown, source: unknown): void {
  if (!Array.isArray(copy) || !Array.isArray(source)) return;
  const found = sourceOf(source);
  if (found && copy !== source && Object.isExtensible(copy)) keep(copy, found);
}

/** An array or a plain object without `toJSON`: what is written member by member. Dates, boxed values and class instances are written whole. */
export const isContainer = (value: unknown): value is object => {
  if (typeof value !== "object" || value === null) return false;
  if (Array.isArray(value)) return true;
  const prototype: unknown = Object.getPrototypeOf(value);
  return (prototype === Object.prototype || prototype === null) && typeof (value as { toJSON?: unknown }).toJSON !== "function";
};

/**
 * Whether `JSON.stringify(value)` parses to what `parsed` is: the same members with equal values. Members
 * JSON leaves out (undefined, functions) are not counted; a value JSON would write otherwise than it reads
 * (an array's hole or undefined, which it writes as null) makes the answer no.
 */
function sameJson(value: unknown, parsed: unknown): boolean {
  if (value === parsed) return true;
  if (!isContainer(value) || typeof parsed !== "object" || parsed === null) return false;
  if (Array.isArray(parsed) || Array.isArray(value)) {
    if (!Array.isArray(parsed) || !Array.isArray(value) || value.length !== parsed.length) return false;
    for (let i = 0; i < value.length; i++) if (!sameJson(value[i], parsed[i])) return false;
    return true;
  }
  const members = parsed as Record<string, unknown>;
  let count = 0;
  for (const key of Object.keys(value)) {
    const member = (value as Record<string, unknown>)[key];
    if (member === undefined || typeof member === "function" || typeof member === "symbol") continue;
    count++;
    if (!Object.hasOwn(members, key) || !sameJson(member, members[key])) return false;
  }
  return count === Object.keys(members).length;
}

/**
 * The groups of `array`'s items whose kept text is still what they are, in order, with that text; empty
 * when it has none. The text is memory later parses reuse: copy it before other code runs.
 */
export function textGroups(array: readonly unknown[]): Array<{ from: number; to: number; text: Buffer }> {
  const source = sourceOf(array);
  if (!source || source.items.length !== array.length) return [];
  const found: Array<{ from: number; to: number; text: Buffer }> = [];
  for (const group of source.groups) {
    const text = textOf(group);
    let same = text !== undefined;
    for (let i = group.from; same && i < group.to; i++) same = sameJson(array[i], source.items[i]);
    if (same) found.push({ from: group.from, to: group.to, text: text! });
  }
  return found;
}
