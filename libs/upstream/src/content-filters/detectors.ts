import type { ContentFilterBuiltinSlug } from "@switchyard/contracts";
import ipaddr from "ipaddr.js";
import { isValidPhoneNumber } from "libphonenumber-js/max";
import creditCardModule from "validator/lib/isCreditCard.js";
import emailModule from "validator/lib/isEmail.js";
import { detectPromptInjection } from "./prompt-injection.js";
import { UPPER, classOf, isLetter, isWordChar, isDigit, codeAt, SPACE, DOT, DASH, windowAlone, lengthOf, sortDedupe, type Span, type Detector, type Group } from "./text.js";

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

// person-name ---------------------------------------------------------------------------------------------

const upper = "A-ZÀ-ÖØ-Þ";
const lower = "a-zß-öø-ÿ";
/** One capitalised name word: Smith, O'Brien, McDonald, Smith-Jones, Müller. */
const nameWord = `[${upper}][${lower}'’]*(?:[${upper}][${lower}]+)?(?:-[${upper}][${lower}]+)?`;
const nameWords = String.raw`${nameWord}(?:[ \t]+${nameWord}){0,2}`;

/**
 * Common given names from many languages, chosen to be names first: words that are as often something else
 * (Will, Mark, Grace, May, Jordan, Austin, Ruby, Max) are left out, so "Max Tokens" is not a person.
 */
const givenNames = new Set(
  `James John Robert Michael William David Richard Joseph Thomas Charles Christopher Daniel Matthew Anthony Donald
Steven Paul Andrew Joshua Kenneth Kevin Brian George Timothy Ronald Edward Jason Jeffrey Ryan Jacob Gary Nicholas
Eric Jonathan Stephen Larry Justin Scott Brandon Benjamin Samuel Gregory Alexander Frank Patrick Raymond Dennis
Jerry Tyler Aaron Adam Nathan Henry Douglas Zachary Peter Kyle Ethan Walter Noah Jeremy Keith Roger Terry Gerald
Harold Sean Carl Arthur Lawrence Dylan Jesse Bryan Billy Bruce Gabriel Logan Albert Alan Wayne Elijah Randy Roy
Vincent Ralph Eugene Russell Bobby Philip Louis Liam Oliver Lucas Owen Caleb Isaac Luke Connor Evan Ian Leo Oscar
Simon Martin Colin Neil Graham Hugh Stuart Trevor Derek Craig Marcus Victor Howard Fred Jim Tom Bob Mike Dave
Steve Chris Tony Matt Dan Ben Sam Alex Nick Tim Andy Greg Jeff Ted Ron Ken Jon Josh Jake Jack Harry Charlie Alfie
Mary Patricia Jennifer Linda Elizabeth Barbara Susan Jessica Sarah Karen Lisa Nancy Betty Margaret Sandra Ashley
Kimberly Emily Donna Michelle Carol Amanda Dorothy Melissa Deborah Stephanie Rebecca Sharon Laura Cynthia Kathleen
Amy Angela Shirley Anna Brenda Pamela Emma Nicole Helen Samantha Katherine Christine Debra Rachel Carolyn Janet
Catherine Maria Heather Diane Ruth Julie Olivia Joyce Kelly Lauren Christina Joan Evelyn Judith Megan Andrea Cheryl
Hannah Jacqueline Martha Gloria Teresa Ann Sara Frances Kathryn Janice Jean Abigail Alice Judy Sophia Isabella Ava
Mia Amelia Chloe Ella Zoe Lily Natalie Claire Lucy Sophie Eleanor Audrey Alison Jane Kate Beth Jenny Sue Liz Meg
Molly Erin Tracy Wendy Paula Diana Fiona Gemma Brooke Emilia Nora
Jose José Juan Carlos Luis Miguel Javier Alejandro Francisco Antonio Manuel Pedro Diego Pablo Sergio Fernando Jorge
Ricardo Eduardo Rafael Andres Andrés Mateo Sofia Sofía Lucia Lucía Valentina Camila Isabel Carmen Ana Elena Marta
Beatriz Gabriela Fernanda Mariana Daniela Ximena Guadalupe Joao João Rodrigo Thiago Gonçalo Inês
Pierre Michel Philippe Alain Nicolas François Julien Antoine Mathieu Camille Chloé Manon Léa Juliette Amélie
Margaux Élodie Sébastien Thierry Olivier Mathilde Guillaume
Hans Klaus Jürgen Stefan Wolfgang Uwe Dieter Lukas Felix Jonas Leon Tobias Florian Sebastian Matthias Katrin
Ursula Sabine Petra Monika Anke Greta Lena Johanna Anja Lars Anders Henrik Nils Erik Sven Magnus Björn Bjorn
Ingrid Astrid Sigrid Freya Elin Johan Pieter Joost Sanne Femke Maarten Bram Daan
Giuseppe Giovanni Marco Luca Francesco Alessandro Matteo Lorenzo Stefano Giulia Chiara Francesca Alessia Martina
Federica Elisa Roberta Paolo Davide Simone Riccardo
Ivan Dmitri Dmitry Sergei Sergey Alexei Andrei Mikhail Vladimir Nikolai Olga Natasha Natalia Tatiana Irina
Svetlana Anastasia Ekaterina Katarzyna Agnieszka Piotr Tomasz Krzysztof Pavel Jakub Marek Zuzana Tereza Oksana
Yulia Bogdan
Mohammed Muhammad Mohamed Ahmed Ahmad Ali Omar Hassan Hussein Youssef Yusuf Ibrahim Khalid Mustafa Karim Tariq
Hamza Bilal Fatima Aisha Layla Leila Mariam Maryam Noor Zainab Yasmin Samira Amira Reza Mehdi Parisa Shirin
Mehmet Emre Burak Elif Zeynep Ayşe Murat
Rahul Amit Arjun Rohan Vikram Sanjay Ravi Suresh Rajesh Anil Priya Ananya Pooja Neha Deepika Kavya Lakshmi Sunita
Anjali Divya Aditya Arun Kiran Vijay Imran Farhan Ayesha Sana
Wei Ming Jing Xiaoming Hiroshi Takashi Kenji Yuki Haruto Akira Satoshi Naoko Yoko Keiko Sakura Yumi Aiko Minjun
Jiwoo Seojun Jisoo Minji Hyun Jiho Thanh Minh Linh Huong
Kwame Kofi Abena Chinedu Chiamaka Ngozi Oluwaseun Tunde Sipho Thabo Nomvula Amara Themba Wanjiru Wanjiku Kamau
Abebe Tendai Farai`.split(/\s+/),
);

/** Capitalised words that follow a given name without being a surname. */
const notSurnames = new Set(
  `The And Or But Nor So Yet If In On At To For From With By Of As Is Are Was Were Be Been Has Have Had Do Does Did
Will Would Can Could Should May Might Must Said Says Not No Yes Also Then Than This That These Those He She It We
They You I Me My Our Your His Her Its Their Who What When Where Why How Which Thanks Thank Hi Hello Dear Please
Street Avenue Road Lane Drive Court Boulevard Way Place Square Park University College School Hospital Church
Inc Ltd Corp Company Group Foundation Institute Center Centre Monday Tuesday Wednesday Thursday Friday Saturday
Sunday January February March April June July August September October November December`.split(/\s+/),
);

const honorifics = new Set("Mr Mrs Ms Mx Miss Dr Prof Sir Dame Lady Lord Rev Capt Sgt Lt Col".split(" "));
const afterHonorific = new RegExp(String.raw`\.?[ \t]+(${nameWords})`, "y");
const introduction = new RegExp(String.raw`(?:[Mm]y name(?: is|'s|’s)|[Cc]all me|I am|I'm|I’m)[ \t]+(${nameWords})`, "y");
const surnameAt = new RegExp(String.raw`[ \t]+(?:[${upper}]\.[ \t]+)?(${nameWord})`, "y");

const isSurname = (word: string) => word.length >= 2 && /[a-zß-öø-ÿ]/.test(word) && !notSurnames.has(word);

/** Extends a name over up to `max` more words that can be surnames; returns its end. */
function surnamesAfter(text: string, at: number, max: number): number {
  let end = at;
  for (let i = 0; i < max; i++) {
    surnameAt.lastIndex = end;
    const m = surnameAt.exec(text);
    if (!m || !isSurname(m[1]!)) break;
    end = surnameAt.lastIndex;
  }
  return end;
}

/** Where the name words `name` (found at `start`) end, trailing words that are not names left out. */
function nameEnd(text: string, start: number, name: string): number {
  const words = name.split(/[ \t]+/);
  let end = start + words[0]!.length;
  for (const word of words.slice(1)) {
    if (!isSurname(word)) break;
    end = text.indexOf(word, end) + word.length;
  }
  return end;
}

/** Whether the word at `i` (`length` letters) can start "my name is", "call me" or "I am" / "I'm". */
function introductionCue(codes: Uint16Array, i: number, length: number): boolean {
  const first = codes[i]! | 0x20;
  if (first === 109) return length === 2 && (codes[i + 1]! | 0x20) === 121; // my
  if (first === 99) return length === 4 && (codes[i + 1]! | 0x20) === 97; // call
  return codes[i] === 73 && length === 1; // I
}

/**
 * Person names, precise rather than greedy. Found: capitalised name words after an honorific ("Dr. Jane
 * Smith": the name, not the honorific); a given name from the list followed by one or two capitalised
 * surnames ("Priya Raman", "John F. Kennedy"); the name after "my name is" or "call me", and after "I am" /
 * "I'm" when it is two words ("I am French" is not a name). Not found: names without a listed given name or
 * a cue ("Smith said"), lowercase names, names in scripts other than Latin, given names left out of the list
 * for being common words. A listed given name before capitalised words that are not names is taken with
 * them ("Emma Watson Fan Club" loses "Emma Watson Fan").
 */
export const detectPersonName: Detector = (scan, found) => {
  const { text, codes, words } = scan;
  const before = found.length;
  const add = (start: number, end: number) => {
    if (end > start) found.push({ start, end });
    return end;
  };
  let reach = 0;
  for (let w = 0; w < words.length; w++) {
    const i = words[w]!;
    const upperFirst = classOf(codes[i]!) === UPPER;
    if (i < reach || (!upperFirst && codes[i] !== 109 && codes[i] !== 99)) continue; // capitalised, or "my", "call"
    let end = i + 1;
    while (end < codes.length && isLetter(codes[end]!)) end++;
    const length = end - i;
    if (introductionCue(codes, i, length)) {
      introduction.lastIndex = i;
      const m = introduction.exec(text);
      if (m && !notSurnames.has(m[1]!.split(/[ \t]/)[0]!)) {
        const start = introduction.lastIndex - m[1]!.length;
        const last = nameEnd(text, start, m[1]!);
        const oneWordEnough = codes[i] !== 73;
        if (oneWordEnough || /[ \t]/.test(text.slice(start, last))) reach = add(start, last);
        continue;
      }
    }
    if (!upperFirst) continue;
    if (length <= 4 && honorifics.has(text.slice(i, end))) {
      afterHonorific.lastIndex = end;
      const m = afterHonorific.exec(text);
      if (m && !notSurnames.has(m[1]!.split(/[ \t]/)[0]!)) {
        const start = afterHonorific.lastIndex - m[1]!.length;
        reach = add(start, nameEnd(text, start, m[1]!));
      }
      continue;
    }
    if (length < 2 || length > 15) continue;
    let next = end;
    while (codes[next] === SPACE || codes[next] === 9) next++;
    if (next === end || classOf(codes[next] ?? 0) !== UPPER || !givenNames.has(text.slice(i, end))) continue;
    const last = surnamesAfter(text, end, 2);
    if (last > end) reach = add(i, last);
  }
  sortDedupe(found, before);
};

// address -------------------------------------------------------------------------------------------------

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
