/**
 * The text being scanned, read once into its UTF-16 code units and lexed once, on first need, into the
 * places detectors look at (word starts, digit runs); and what detectors share about spans.
 */

/** A matched range of a text, `end` exclusive (UTF-16 indices). */
export interface Span {
  start: number;
  end: number;
}

/** Appends the spans a builtin matches in the scanned text to `found`. */
export type Detector = (scan: ScanText, found: Span[]) => void;

/*
 * Cost. A regular expression run over a whole text costs V8 about a nanosecond per character and attempt,
 * more with many alternatives, and each match found costs a call; on an 8 KB prompt that adds up per
 * detector. So the text is read once into a typed array of its UTF-16 code units (looping over it is
 * several times cheaper than charCodeAt) and lexed once, on first need: where words start and where runs
 * of digits are. Detectors then look only at the few places that can start their shapes and run small
 * sticky regular expressions there; validation (isEmail, Luhn, libphonenumber, ipaddr.js) runs only on the
 * candidates those let through.
 *
 * Safety. These regular expressions run on V8's backtracking engine, so each is written to stay linear:
 * repeated groups have a bound ({1,4}) and the parts inside one cannot match the same characters (a word,
 * the blanks after it), and alternatives of a repeated group cannot match the same text. Where a shape may
 * start again inside its own match, the detector skips past a match or the shape's length is capped. Custom
 * workspace patterns never run here (they run on re2js).
 */

// character classes ---------------------------------------------------------------------------------------

const OTHER = 0;
const DIGIT = 1;
const LOWER = 2;
export const UPPER = 3;
const UNDERSCORE = 4;

/** Classes of the code units below U+0250 (ASCII, Latin-1, Latin Extended-A and -B); others are OTHER. */
const classes = new Uint8Array(0x250);
for (let c = 0; c < 0x250; c++) {
  const ch = String.fromCharCode(c);
  if (c >= 48 && c <= 57) classes[c] = DIGIT;
  else if (c === 95) classes[c] = UNDERSCORE;
  else if (ch.toLowerCase() !== ch) classes[c] = UPPER;
  else if (ch.toUpperCase() !== ch || c === 0xdf) classes[c] = LOWER;
}
export const classOf = (c: number) => (c < 0x250 ? classes[c]! : OTHER);
export const isLetter = (c: number) => {
  const k = classOf(c);
  return k === LOWER || k === UPPER;
};
export const isWordChar = (c: number) => classOf(c) !== OTHER;
export const isDigit = (c: number) => c >= 48 && c <= 57;
/**
 * The code unit at `i`, 0 outside the text. The helpers above only ever see small integers this way: V8
 * shares their type feedback between callers, and one `undefined` or NaN makes them slow for all.
 */
export const codeAt = (codes: Uint16Array, i: number) => (i >= 0 && i < codes.length ? codes[i]! : 0);

// the scanned text ----------------------------------------------------------------------------------------

/** A run of digit groups joined by single spaces, dots or dashes: "2024", "4111 1111 1111 1111", "10.0.0.1". */
export interface DigitRun {
  start: number;
  end: number;
  /** A letter or `_` follows right after the run ("221B", "12px"). Letters never come right before one. */
  touching: boolean;
  groups: Group[] | undefined;
}

/** One group of a run; `sep` is the code of the separator before it (0 for the first). */
export interface Group {
  start: number;
  end: number;
  sep: number;
}

export const SPACE = 32;
export const DOT = 46;
export const DASH = 45;

/** Scratch memory for the code units of the text being scanned: scans are synchronous, one at a time. */
let scratch = Buffer.allocUnsafeSlow(1 << 15);
/** Texts up to 1 M characters keep their scratch memory for the next scan; longer ones get their own. */
const maxScratch = 1 << 21;
let wordScratch = new Int32Array(1 << 13);

/** One text being scanned, and what detectors share about it (computed on first use). */
export class ScanText {
  readonly text: string;
  #codes: Uint16Array | undefined;
  #words: Int32Array | undefined;
  #runs: DigitRun[] | undefined;
  #memo: Map<object, boolean> | undefined;

  constructor(text: string) {
    this.text = text;
  }

  /** `test()` once per scan, for work several filters share (keyed by `key`). */
  once(key: object, test: () => boolean): boolean {
    this.#memo ??= new Map();
    let result = this.#memo.get(key);
    if (result === undefined) this.#memo.set(key, (result = test()));
    return result;
  }

  /** The text's UTF-16 code units (a view of scratch memory, valid during this scan only). */
  get codes(): Uint16Array {
    if (!this.#codes) {
      const bytes = this.text.length * 2;
      let buffer = scratch;
      if (bytes > scratch.length) {
        buffer = Buffer.allocUnsafeSlow(bytes);
        if (bytes <= maxScratch) scratch = buffer;
      }
      buffer.write(this.text, 0, "utf16le");
      // Uint16Array reads in the platform's byte order: little-endian on every platform Node supports.
      this.#codes = new Uint16Array(buffer.buffer, buffer.byteOffset, this.text.length);
    }
    return this.#codes;
  }

  /** Where words start: a letter after anything but a letter, digit or `_`. */
  get words(): Int32Array {
    if (!this.#words) this.#lex();
    return this.#words!;
  }

  /** Runs of digit groups not preceded by a letter, digit or `_`. */
  get runs(): readonly DigitRun[] {
    if (!this.#runs) this.#lex();
    return this.#runs!;
  }

  #lex(): void {
    const codes = this.codes;
    const n = codes.length;
    if (wordScratch.length < (n >> 1) + 1) wordScratch = new Int32Array((n >> 1) + 1);
    const words = wordScratch;
    const runs: DigitRun[] = [];
    let count = 0;
    let previousIsWord = false;
    for (let i = 0; i < n; i++) {
      const c = codes[i]!;
      const k = c < 0x250 ? classes[c]! : OTHER;
      if (previousIsWord || k === OTHER || k === UNDERSCORE) {
        previousIsWord = k !== OTHER;
        continue;
      }
      if (k !== DIGIT) {
        words[count++] = i;
        previousIsWord = true;
        continue;
      }
      let end = i + 1;
      while (end < n) {
        const d = codes[end]!;
        if (d >= 48 && d <= 57) end++;
        else if ((d === SPACE || d === DOT || d === DASH) && end + 1 < n && codes[end + 1]! >= 48 && codes[end + 1]! <= 57) end += 2;
        else break;
      }
      runs.push({ start: i, end, touching: end < n && isWordChar(codes[end]!), groups: undefined });
      i = end - 1;
      previousIsWord = true;
    }
    this.#words = words.subarray(0, count);
    this.#runs = runs;
  }

  /** The groups of a run. */
  groups(run: DigitRun): Group[] {
    if (run.groups) return run.groups;
    const codes = this.codes;
    const groups: Group[] = (run.groups = []);
    let start = run.start;
    let sep = 0;
    for (let i = run.start; i < run.end; i++) {
      if (isDigit(codes[i]!)) continue;
      groups.push({ start, end: i, sep });
      sep = codes[i]!;
      start = i + 1;
    }
    groups.push({ start, end: run.end, sep });
    return groups;
  }
}

/** A window of groups `i..j` stands on its own: outside it the run goes on only after a space. */
export const windowAlone = (groups: Group[], i: number, j: number) =>
  (i === 0 || groups[i]!.sep === SPACE) && (j === groups.length - 1 || groups[j + 1]!.sep === SPACE);
export const lengthOf = (g: Group) => g.end - g.start;

/** Sorts `found` from `from` on by start and drops spans that overlap an earlier (or, at the same start, longer) one. */
export function sortDedupe(found: Span[], from: number): void {
  if (found.length - from < 2) return;
  const mine = found.splice(from).sort((a, b) => a.start - b.start || b.end - a.end);
  let reach = -1;
  for (const s of mine) {
    if (s.start < reach) continue;
    found.push(s);
    reach = s.end;
  }
}
