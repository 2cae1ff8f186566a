/** The named references of Latin-1, for the characters from U+00A0 on, in order. */
const latin1 =
  "nbsp iexcl cent pound curren yen brvbar sect uml copy ordf laquo not shy reg macr deg plusmn sup2 sup3 acute micro para middot cedil sup1 ordm raquo frac14 frac12 frac34 iquest " +
  "Agrave Aacute Acirc Atilde Auml Aring AElig Ccedil Egrave Eacute Ecirc Euml Igrave Iacute Icirc Iuml ETH Ntilde Ograve Oacute Ocirc Otilde Ouml times Oslash Ugrave Uacute Ucirc Uuml Yacute THORN szlig " +
  "agrave aacute acirc atilde auml aring aelig ccedil egrave eacute ecirc euml igrave iacute icirc iuml eth ntilde ograve oacute ocirc otilde ouml divide oslash ugrave uacute ucirc uuml yacute thorn yuml";

/** The character references pages use most; any other named one is left as written. */
const named: Record<string, string> = {
  ...Object.fromEntries(latin1.split(" ").map((name, i) => [name, String.fromCharCode(0xa0 + i)])),
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
  nbsp: " ",
  ensp: " ",
  emsp: " ",
  thinsp: " ",
  shy: "",
  zwj: "",
  zwnj: "",
  trade: "™",
  hellip: "…",
  mdash: "—",
  ndash: "–",
  minus: "−",
  lsquo: "‘",
  rsquo: "’",
  sbquo: "‚",
  ldquo: "“",
  rdquo: "”",
  bdquo: "„",
  lsaquo: "‹",
  rsaquo: "›",
  bull: "•",
  euro: "€",
  larr: "←",
  rarr: "→",
  uarr: "↑",
  darr: "↓",
  harr: "↔",
  check: "✓",
};

/** Decodes character references in one pass, so `&amp;lt;` stays the text `&lt;`. */
export function decodeEntities(text: string): string {
  return text.replace(/&(#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});?/g, (whole, ref: string) => {
    if (ref.startsWith("#")) {
      const code = ref[1] === "x" || ref[1] === "X" ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
      // NUL, surrogates and numbers past Unicode read as the replacement character, as browsers do.
      return code === 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff) ? "\uFFFD" : String.fromCodePoint(code);
    }
    return named[ref] ?? named[ref.toLowerCase()] ?? whole;
  });
}

/** Elements whose content is never text a reader sees in the page (the title is taken apart). */
const hidden = ["title", "script", "style", "noscript", "template", "svg", "math", "head", "iframe", "object", "canvas", "select"];

/** Elements that start a new line. */
const blocks =
  "address|article|aside|blockquote|dd|details|dialog|div|dl|dt|fieldset|figcaption|figure|footer|form|h[1-6]|header|hr|main|nav|ol|p|section|summary|table|tbody|thead|tfoot|tr|ul";

/** Marks where a preformatted block goes back: a private-use character. */
const mark = "\uE000";

/**
 * Whitespace that collapses to one space: a run of two or more, or one character other than a space. A
 * single space is left alone: replacing each one with itself made ordinary text of a few megabytes take
 * seconds.
 */
const collapsible = /\s{2,}|[^\S ]/g;

/** Runs of spaces collapsed (a lone space left as it is, see `collapsible`), each line trimmed, at most one blank line between paragraphs. */
function tidy(text: string): string {
  return text
    .split("\n")
    .map((line) => line.replace(/[ \t\f\v\r\u00a0]{2,}|[\t\f\v\r\u00a0]/g, " ").trim())
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}

/**
 * Replaces each match of `tag`, a global pattern that ends in `>` (such as `<br\b[^>]*>`), in linear time.
 * A tag never closed made the pattern read on to the end of the text from every `<` that could start it,
 * so a page of such openings took time growing with the square of its size. No match can end after the
 * text's last `>`, so the pattern only reads up to it: there every scan for `>` stops at the next one, and
 * the matches are those it finds in the whole text.
 */
function replaceTags(text: string, tag: RegExp, replacement: (match: string) => string): string {
  const end = text.lastIndexOf(">") + 1;
  return text.slice(0, end).replace(tag, replacement) + text.slice(end);
}

/**
 * Each element `name` from its opening tag to its closing tag, or to the end of the text when it is never
 * closed, replaced with what `replacement` makes of its content: what `<name\b[^>]*>([\s\S]*?)(?:</name\s*>|$)`
 * does, in linear time (see `replaceTags`).
 */
function replaceElements(text: string, name: string, replacement: (inner: string) => string): string {
  const head = text.slice(0, text.lastIndexOf(">") + 1);
  const open = new RegExp(`<${name}\\b[^>]*>`, "gi");
  const close = new RegExp(`</${name}\\s*>`, "gi");
  let out = "";
  let from = 0;
  for (let opened = open.exec(head); opened; opened = open.exec(head)) {
    close.lastIndex = open.lastIndex;
    const closed = close.exec(text);
    out += text.slice(from, opened.index) + replacement(text.slice(open.lastIndex, closed ? closed.index : text.length));
    if (!closed) return out;
    from = open.lastIndex = close.lastIndex;
  }
  return out + text.slice(from);
}

/** A fragment's tags dropped and its references decoded; `<br>` is a line break. */
const flatten = (html: string): string => decodeEntities(replaceTags(replaceTags(html, /<br\b[^>]*>/gi, () => "\n"), /<\/?[A-Za-z][^>]*>/g, () => ""));

/** The content of the page's first `<title>` element, when it is closed. */
function titleOf(html: string): string | undefined {
  const open = /<title\b[^>]*>/i.exec(html.slice(0, html.lastIndexOf(">") + 1));
  if (!open) return undefined;
  const start = open.index + open[0].length;
  const close = /<\/title\s*>/gi;
  close.lastIndex = start;
  const closed = close.exec(html);
  return closed ? html.slice(start, closed.index) : undefined;
}

/**
 * An HTML page as the text a reader sees: its title, and its body without scripts, styles or markup.
 * Whitespace is collapsed as a browser does; block elements start new lines, list items read as `- `,
 * and preformatted text keeps its lines.
 */
export function htmlToText(html: string): { title: string | undefined; text: string } {
  const titleText = titleOf(html);
  const title = titleText === undefined ? "" : flatten(titleText).replace(/\s+/g, " ").trim();
  // The page's own use of the placeholder character is dropped: it marks the preformatted blocks below.
  let body = html.replaceAll(mark, "").replace(/<!--[\s\S]*?(?:-->|$)/g, " ").replace(/<!\[CDATA\[[\s\S]*?(?:\]\]>|$)/g, " ");
  body = replaceTags(body, /<![^>]*>|<\?[^>]*>/g, () => " ");
  for (const tag of hidden) body = replaceElements(body, tag, () => " ");
  // Preformatted blocks are set aside whole, so the collapsing below leaves their lines alone.
  const kept: string[] = [];
  body = replaceElements(body, "pre", (inner) => `\n\n${mark}${kept.push(flatten(inner).replace(/^\n/, "").trimEnd()) - 1}${mark}\n\n`);
  body = body.replace(collapsible, " ");
  body = replaceTags(body, /<br\b[^>]*>/gi, () => "\n");
  body = replaceTags(body, /<li\b[^>]*>/gi, () => "\n- ");
  body = replaceTags(body, /<\/li\s*>/gi, () => "");
  body = replaceTags(body, /<\/?(?:t[dh])\b[^>]*>/gi, () => " ");
  body = replaceTags(body, new RegExp(`</?(?:${blocks})\\b[^>]*>`, "gi"), (tag) => (/^<\/?(?:p|h[1-6]|blockquote|table|ul|ol|section|article)\b/i.test(tag) ? "\n\n" : "\n"));
  body = replaceTags(body, /<\/?[A-Za-z][^>]*>/g, () => "");
  const text = tidy(decodeEntities(body)).replace(new RegExp(`${mark}(\\d+)${mark}`, "g"), (_whole, n: string) => kept[Number(n)] ?? "");
  return { title: title || undefined, text };
}
