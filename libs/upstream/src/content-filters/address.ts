import { DASH, DOT, lengthOf, SPACE, sortDedupe, type Detector, type Span } from "./text.js";

/** Street suffixes: words, then abbreviations (which take their full stop). */
const streetSuffix =
  String.raw`(?:Street|Avenue|Road|Boulevard|Lane|Drive|Court|Way|Place|Terrace|Parkway|Highway|Square|Circle|Trail|Crescent|Close|` +
  String.raw`Row|Plaza|Alley|Loop|Pike|Walk|Gardens|Grove|Mews)\b|(?:St|Ave|Rd|Blvd|Ln|Dr|Ct|Pl|Ter|Pkwy|Hwy|Sq|Cir|Trl|Cres)\b\.?`;
const streetWord = String.raw`(?:[A-Z][A-Za-z'’-]*\.?|\d{1,3}(?:st|nd|rd|th))`;
const street = new RegExp(
  String.raw`\d{1,6}[A-Z]?[ \t]+(?:${streetWord}[ \t]+){1,4}(?:${streetSuffix})(?:[ \t]+(?:N|S|E|W|NE|NW|SE|SW)\b\.?)?` +
    String.raw`(?:,?[ \t]+(?:Apt|Apartment|Suite|Ste|Unit|Room|Rm|Floor|Fl|#)\.?[ \t]*#?[A-Za-z0-9-]{1,6}\b)?` +
    String.raw`(?:,[ \t]*[A-Z][A-Za-z'’-]+(?:[ \t]+[A-Z][A-Za-z'’-]+){0,3},[ \t]*[A-Z]{2}(?:[ \t]+\d{5}(?:-\d{4})?)?\b)?`,
  "y",
);
const poBoxBefore = /(?:\bP\.?[ \t]?O\.?|\bPost Office)[ \t]*Box[ \t]+$/i;

const isBlank = (c: number | undefined) => c === SPACE || c === 9;
const isAsciiUpper = (c: number | undefined) => c !== undefined && c >= 65 && c <= 90;

/**
 * Street addresses: a house number, one to four capitalised words (or an ordinal: 5th), a street suffix
 * (Street, St, Avenue, Rd, ...) and a direction (NW), optionally a unit ("Apt 4B", "Suite 200") and a
 * ", City, ST 12345" tail; and PO boxes. Not found: lowercase addresses, addresses without a house number
 * or suffix ("Calle Mayor 5" and "Unter den Linden 77" put the number last), rural routes, a city tail
 * without a state ("221B Baker Street, London" loses the street only). A sentence such as "3 Big Dogs Way"
 * matches.
 */
export const detectAddress: Detector = (scan, found) => {
  const { text, codes } = scan;
  const before = found.length;
  let reach = 0;
  for (const run of scan.runs) {
    if (run.start < reach) continue;
    const previous = codes[run.start - 1];
    if (run.start >= 6 && isBlank(previous) && (codes[run.start - 2]! | 0x20) === 120) {
      const m = poBoxBefore.exec(text.slice(Math.max(0, run.start - 24), run.start));
      if (m && !run.touching) {
        const start = run.start - (Math.min(24, run.start) - m.index);
        found.push({ start, end: scan.groups(run)[0]!.end });
        continue;
      }
    }
    if (previous === DOT || previous === 44 || previous === DASH) continue;
    const groups = scan.groups(run);
    for (let g = 0; g < groups.length; g++) {
      const group = groups[g]!;
      if (lengthOf(group) > 6 || (g > 0 && group.sep !== SPACE)) continue;
      let after = group.end;
      if (isAsciiUpper(codes[after]) && g === groups.length - 1) after++;
      if (!isBlank(codes[after])) continue;
      street.lastIndex = group.start;
      if (!street.exec(text)) continue;
      reach = add(found, group.start, street.lastIndex);
      break;
    }
  }
  sortDedupe(found, before);
};

function add(found: Span[], start: number, end: number): number {
  found.push({ start, end });
  return end;
}
