import type { ContentFilterBuiltinSlug } from "@switchyard/contracts";
import ipaddr from "ipaddr.js";
import { isValidPhoneNumber } from "libphonenumber-js/max";
import creditCardModule from "validator/lib/isCreditCard.js";
import emailModule from "validator/lib/isEmail.js";
import { detectAddress } from "./address.js";
import { detectPersonName } from "./person-name.js";
import { detectPromptInjection } from "./prompt-injection.js";
import { codeAt, DASH, DOT, isDigit, isWordChar, lengthOf, sortDedupe, SPACE, windowAlone, type Detector, type Group, type Span } from "./text.js";

// validator's files are CommonJS; under NodeNext their typings describe the default import as the module
// object, whose `default` is the function (the module sets both).
const isCreditCard = creditCardModule.default;
const isEmail = emailModule.default;

// email -------------------------------------------------------------------------------------------------

const isLocalChar = (c: number) => (c < 128 && isWordChar(c)) || c === 46 || c === 37 || c === 43 || c === 45; // . % + -
const isDomainChar = (c: number) => (c < 128 && isWordChar(c) && c !== 95) || c === 46 || c === 45; // . -

/** Expands around each `@` to the widest local part and domain, then lets isEmail decide. ASCII addresses only. */
export const detectEmail: Detector = (scan, found) => {
  const text = scan.text;
  let at = text.indexOf("@");
  const codes = at === -1 ? undefined : scan.codes;
  while (codes && at !== -1) {
    let start = at;
    while (start > 0 && isLocalChar(codes[start - 1]!)) start--;
    while (start < at && codes[start] === DOT) start++;
    let end = at + 1;
    while (end < codes.length && isDomainChar(codes[end]!)) end++;
    while (end > at + 1 && (codes[end - 1] === DOT || codes[end - 1] === DASH)) end--;
    const valid = start < at && at - start <= 64 && end - at > 3 && isEmail(text.slice(start, end));
    if (valid) found.push({ start, end });
    at = text.indexOf("@", valid ? end : at + 1);
  }
};

// credit-card ---------------------------------------------------------------------------------------------

const cardGroup = (g: Group) => lengthOf(g) >= 3 && lengthOf(g) <= 6;

/** The Luhn checksum holds (a cheap refusal before isCreditCard, which checks it too). */
function luhn(digits: string): boolean {
  let sum = 0;
  for (let i = digits.length - 1, double = false; i >= 0; i--, double = !double) {
    let d = digits.charCodeAt(i) - 48;
    if (double) d = d > 4 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return sum % 10 === 0;
}

/**
 * Cards: 13–19 digits, alone or in groups of 3 to 6 joined by one kind of separator (space or dash),
 * passing isCreditCard (issuer prefixes and Luhn). Within a longer run of groups the longest valid window
 * of whole groups is taken, so "4111 1111 1111 1111 2025" finds the card. A single group of 20 digits or
 * more (an id) is never a card, nor a number after a decimal point, nor a list of small numbers.
 */
export const detectCreditCard: Detector = (scan, found) => {
  for (const run of scan.runs) {
    if (run.touching || run.end - run.start < 13) continue;
    const groups = scan.groups(run);
    for (let i = 0; i < groups.length; i++) {
      let digits = "";
      let best = -1;
      for (let j = i; j < groups.length; j++) {
        const group = groups[j]!;
        if (j > i) {
          if (group.sep === DOT || (j > i + 1 && group.sep !== groups[i + 1]!.sep)) break;
          if (!cardGroup(groups[i]!) || !cardGroup(group)) break;
        }
        digits += scan.text.slice(group.start, group.end);
        if (digits.length > 19) break;
        if (digits.length >= 13 && windowAlone(groups, i, j) && luhn(digits) && isCreditCard(digits)) best = j;
      }
      if (best === -1) continue;
      found.push({ start: groups[i]!.start, end: groups[best]!.end });
      i = best;
    }
  }
};

// ssn -----------------------------------------------------------------------------------------------------

/**
 * SSNs as ddd-dd-dddd or ddd dd dddd with the SSA's rules: area not 000, 666 or 900–999, group not 00,
 * serial not 0000. The dashed form is also found beside other numbers; the spaced form only alone (in
 * "100 200 30 4000" it is a list).
 */
export const detectSsn: Detector = (scan, found) => {
  const { text } = scan;
  for (const run of scan.runs) {
    if (run.touching || run.end - run.start < 11) continue;
    const groups = scan.groups(run);
    for (let i = 0; i + 2 < groups.length; i++) {
      const [a, b, c] = [groups[i]!, groups[i + 1]!, groups[i + 2]!];
      if (lengthOf(a) !== 3 || lengthOf(b) !== 2 || lengthOf(c) !== 4 || b.sep !== c.sep || b.sep === DOT) continue;
      if (!windowAlone(groups, i, i + 2) || (b.sep === SPACE && groups.length !== 3)) continue;
      const area = Number(text.slice(a.start, a.end));
      if (area === 0 || area === 666 || area >= 900) continue;
      if (text.slice(b.start, b.end) === "00" || text.slice(c.start, c.end) === "0000") continue;
      found.push({ start: a.start, end: c.end });
      i += 2;
    }
  }
};

// phone ---------------------------------------------------------------------------------------------------

/** International numbers written with their + and country code: +44 20 7946 0958, +1 (415) 555-2671, +14155552671. */
const intlPhone = /\+\d[\d ().-]{6,22}\d(?![\w]|[.-]\d)/y;
const doubledSeparator = /[.-]{2}| {2}|\(\(|\)\)|\(\)/;
const digitsOf = (s: string) => s.replace(/\D/g, "");

/** Area code and exchange both start with 2–9 (a quick refusal before libphonenumber). */
function plausibleNanp(digits: string): boolean {
  const national = digits.length === 11 && digits[0] === "1" ? digits.slice(1) : digits;
  return national.length === 10 && national[0]! >= "2" && national[3]! >= "2";
}

/**
 * Phone numbers libphonenumber-js (full metadata) holds valid. With a + and a country code, any grouping;
 * without, North American numbers as people write them: (415) 555-2671, 415-555-2671, 415.555.2671,
 * 415 555 2671, 1-800-555-0199. Ten digits without separators are not taken (ids, timestamps), nor dates,
 * years or prices, which libphonenumber does not hold valid.
 */
export const detectPhone: Detector = (scan, found) => {
  const { text, codes } = scan;
  const before = found.length;
  for (let plus = text.indexOf("+"); plus !== -1; plus = text.indexOf("+", plus + 1)) {
    const previous = codeAt(codes, plus - 1);
    if (!isDigit(codeAt(codes, plus + 1)) || isWordChar(previous) || previous === 43) continue;
    intlPhone.lastIndex = plus;
    const m = intlPhone.exec(text);
    if (!m) continue;
    // The shape may have taken a number that follows ("+44 20 7946 0958 2024"): drop spaced groups from the end.
    for (let candidate = m[0]; candidate; candidate = candidate.slice(0, Math.max(0, candidate.lastIndexOf(" ")))) {
      const digits = digitsOf(candidate);
      if (digits.length < 8) break;
      if (digits.length > 15 || doubledSeparator.test(candidate) || !isValidPhoneNumber(candidate)) continue;
      found.push({ start: plus, end: plus + candidate.length });
      plus += candidate.length - 1;
      break;
    }
  }
  const international = found.length;
  const add = (start: number, end: number) => {
    for (let f = before; f < international; f++) if (start < found[f]!.end && found[f]!.start < end) return;
    const candidate = text.slice(start, end);
    if (plausibleNanp(digitsOf(candidate)) && isValidPhoneNumber(candidate, "US")) found.push({ start, end });
  };
  const runs = scan.runs;
  for (let r = 0; r < runs.length; r++) {
    const run = runs[r]!;
    if (run.touching) continue;
    const length = run.end - run.start;
    if (length === 3 && codeAt(codes, run.start - 1) === 40 && codeAt(codes, run.end) === 41) {
      // (415) 555-2671: the area code in parentheses, then a run that starts with 3 and 4 digits
      const next = runs[r + 1];
      if (!next || next.touching || next.start > run.end + 2) continue;
      const groups = scan.groups(next);
      if (groups.length < 2 || lengthOf(groups[0]!) !== 3 || lengthOf(groups[1]!) !== 4 || !windowAlone(groups, 0, 1)) continue;
      add(run.start - 1, groups[1]!.end);
      continue;
    }
    if (length < 12 || codeAt(codes, run.start - 1) === 43) continue;
    const groups = scan.groups(run);
    for (let i = 0; i + 2 < groups.length; i++) {
      const first = lengthOf(groups[i]!) === 1 && codes[groups[i]!.start] === 49 ? 1 : 0; // a leading 1
      const j = i + first;
      if (j + 2 >= groups.length || lengthOf(groups[j]!) !== 3 || lengthOf(groups[j + 1]!) !== 3) continue;
      if (lengthOf(groups[j + 2]!) !== 4) continue;
      if (!windowAlone(groups, i, j + 2)) continue;
      add(groups[i]!.start, groups[j + 2]!.end);
      i = j + 2;
    }
  }
};

// ip-address ----------------------------------------------------------------------------------------------

const isHexChar = (c: number) => isDigit(c) || ((c | 0x20) >= 97 && (c | 0x20) <= 102);
const isIpv6Char = (c: number) => isHexChar(c) || c === 58 || c === DOT;

/**
 * IPv6 candidates grow from each colon that has a hex digit or colon on both sides, to the run of hex digits,
 * colons and dots around it; the run must stand alone, hold a digit and two colons, and parse. So hex-only
 * words joined by `::` in code (`dead::beef`) are left alone, and times (12:30:45) and MAC addresses do not
 * parse.
 */
function detectIpv6(text: string, codes: Uint16Array, found: Span[]): void {
  for (let colon = text.indexOf(":"); colon !== -1; colon = text.indexOf(":", colon + 1)) {
    const left = codeAt(codes, colon - 1);
    const right = codeAt(codes, colon + 1);
    if (!(isHexChar(left) || left === 58) || !(isHexChar(right) || right === 58)) continue;
    let start = colon;
    while (start > 0 && isIpv6Char(codes[start - 1]!)) start--;
    let end = colon + 1;
    while (end < codes.length && isIpv6Char(codes[end]!)) end++;
    while (end > colon + 1 && codes[end - 1] === DOT) end--; // a sentence's full stop
    colon = end;
    if (end - start > 45 || isWordChar(codeAt(codes, start - 1)) || isWordChar(codeAt(codes, end))) continue;
    const candidate = text.slice(start, end);
    const twoColons = candidate.indexOf(":") !== candidate.lastIndexOf(":");
    if (twoColons && /\d/.test(candidate) && ipaddr.IPv6.isValid(candidate)) found.push({ start, end });
  }
}

/**
 * IPv4 dotted quads (each part at most 255, no leading zeros: ipaddr.js decides) not inside a longer dotted
 * sequence (1.2.3.4.5) or a word (v1.2.3.4), and IPv6 addresses.
 */
export const detectIpAddress: Detector = (scan, found) => {
  const before = found.length;
  for (const run of scan.runs) {
    if (run.touching || run.end - run.start < 7) continue;
    const groups = scan.groups(run);
    for (let i = 0; i + 3 < groups.length; i++) {
      const dotted = groups[i + 1]!.sep === DOT && groups[i + 2]!.sep === DOT && groups[i + 3]!.sep === DOT;
      if (!dotted || !windowAlone(groups, i, i + 3)) continue;
      const candidate = scan.text.slice(groups[i]!.start, groups[i + 3]!.end);
      if (ipaddr.IPv4.isValidFourPartDecimal(candidate)) found.push({ start: groups[i]!.start, end: groups[i + 3]!.end });
    }
  }
  if (scan.text.includes(":")) detectIpv6(scan.text, scan.codes, found);
  sortDedupe(found, before);
};

// secrets -------------------------------------------------------------------------------------------------

/**
 * Credential shapes, each tried (sticky) where a word starts with the two letters before it. Lengths are
 * capped: a shape whose characters include `-` can start again inside its own text ("sk-a-sk-a-…"), and
 * the caps bound what each of those tries reads.
 */
const secretShapes = {
  AK: /AKIA[0-9A-Z]{16}\b/y, // AWS access key id
  AS: /ASIA[0-9A-Z]{16}\b/y, // AWS temporary access key id
  AI: /AIza[0-9A-Za-z_-]{35}/y, // Google API key
  gh: /gh[pousr]_[A-Za-z0-9]{36,251}\b|github_pat_[A-Za-z0-9_]{40,251}\b/y, // GitHub tokens
  // Switchyard, Anthropic, OpenAI-style, Stripe secret keys
  sk: /sk-sy-v1-[0-9a-f]{64}[0-9A-Za-z]{8}\b|sk-ant-[A-Za-z0-9_-]{20,400}|sk-[A-Za-z0-9_-]{20,400}|sk_live_[A-Za-z0-9]{16,400}/y,
  rk: /rk_live_[A-Za-z0-9]{16,400}/y, // Stripe restricted key
  xo: /xox[abprs]-[A-Za-z0-9-]{10,400}/y, // Slack
  ey: /eyJ[A-Za-z0-9_-]{5,2000}\.eyJ[A-Za-z0-9_-]{5,16000}\.[A-Za-z0-9_-]{10,2000}/y, // JWT
};

/** The shape a word starting with code units `a`, `b` can have. */
function secretShape(a: number, b: number): RegExp | undefined {
  switch (a) {
    case 65: // A
      return b === 75 ? secretShapes.AK : b === 83 ? secretShapes.AS : b === 73 ? secretShapes.AI : undefined;
    case 103: // g
      return b === 104 || b === 105 ? secretShapes.gh : undefined; // gh…, github_pat_
    case 115: // s
      return b === 107 ? secretShapes.sk : undefined;
    case 114: // r
      return b === 107 ? secretShapes.rk : undefined;
    case 120: // x
      return b === 111 ? secretShapes.xo : undefined;
    case 101: // e
      return b === 121 ? secretShapes.ey : undefined;
    default:
      return undefined;
  }
}
const pemBegin = /-----BEGIN (?:[A-Z0-9]+ ){0,3}PRIVATE KEY-----/g;
const pemEnd = /-----END (?:[A-Z0-9]+ ){0,3}PRIVATE KEY-----/g;
/** A line of a PEM body: base64, or a header such as "Proc-Type: 4,ENCRYPTED". */
const pemLine = /\r?\n[ \t]*(?:[A-Za-z0-9+/=]+|[A-Za-z-]+:[^\n]*)[ \t]*(?=\r?\n|$)/y;

/**
 * Where a PEM block whose BEGIN line ends at `from` ends: after its END line, or after its last body line.
 * `ends` remembers the END line found last (or that there is none), so many BEGIN lines read the text once.
 */
function pemBlockEnd(text: string, from: number, ends: { at: number; end: number }): number {
  if (ends.at !== -1 && ends.at < from) {
    pemEnd.lastIndex = from;
    const m = pemEnd.exec(text);
    ends.at = m ? m.index : -1;
    ends.end = pemEnd.lastIndex;
  }
  if (ends.at !== -1) return ends.end;
  let end = from;
  pemLine.lastIndex = end;
  while (pemLine.exec(text)) end = pemLine.lastIndex;
  return end;
}

/** The end of the base64url characters from `i`. */
function base64urlEnd(codes: Uint16Array, i: number): number {
  let end = i;
  while (end < codes.length && (codes[end] === 45 || (codes[end]! < 128 && isWordChar(codes[end]!)))) end++;
  return end;
}

/**
 * Known credential shapes (each holding a digit, so "sk-" before a long hyphenated phrase is not a key):
 * AWS access key ids, GitHub tokens, Switchyard, Anthropic and OpenAI-style sk- keys, Stripe live keys,
 * Google API keys, Slack tokens, JWTs; and PEM private key blocks whole, to the END line or, when it is
 * missing, to the last base64 line.
 */
export const detectSecrets: Detector = (scan, found) => {
  const { text, codes, words } = scan;
  const before = found.length;
  let reach = 0;
  let dot = -2; // the next "." at or after the word tried last; -1 once there is none
  for (let w = 0; w < words.length; w++) {
    const i = words[w]!;
    const shape = i < reach ? undefined : secretShape(codes[i]!, codeAt(codes, i + 1));
    if (!shape) continue;
    if (shape === secretShapes.ey) {
      // A JWT's first part ends at the next ".", at most 2003 characters on.
      if (dot !== -1 && dot < i) dot = text.indexOf(".", i);
      if (dot === -1 || dot - i > 2003) continue;
    }
    shape.lastIndex = i;
    const m = shape.exec(text);
    if (!m) {
      // A JWT's first part may hold "-": a later "eyJ" before the same "." fails as this one did.
      if (shape === secretShapes.ey) reach = base64urlEnd(codes, i);
      continue;
    }
    reach = shape.lastIndex; // what starts inside it is part of it
    if (/\d/.test(m[0])) found.push({ start: i, end: reach });
  }
  if (text.includes("-----BEGIN ")) {
    const ends = { at: 0, end: 0 };
    pemBegin.lastIndex = 0;
    for (let m = pemBegin.exec(text); m; m = pemBegin.exec(text)) {
      const end = pemBlockEnd(text, pemBegin.lastIndex, ends);
      found.push({ start: m.index, end });
      pemBegin.lastIndex = end;
    }
  }
  sortDedupe(found, before);
};

/** The detector of each builtin. */
export const detectors: Record<ContentFilterBuiltinSlug, Detector> = {
  email: detectEmail,
  phone: detectPhone,
  ssn: detectSsn,
  "credit-card": detectCreditCard,
  "ip-address": detectIpAddress,
  secrets: detectSecrets,
  "person-name": detectPersonName,
  address: detectAddress,
  "regex-prompt-injection": detectPromptInjection,
};
