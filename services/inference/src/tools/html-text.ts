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

/** Runs of spaces collapsed, each line trimmed, at most one blank line between paragraphs. */
function tidy(text: string): string {
  return text
    .split("\n")
    .map((line) => line.replace(/[ \t\f\v\r\u00a0]+/g, " ").trim())
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}

/** A fragment's tags dropped and its references decoded; `<br>` is a line break. */
const flatten = (html: string): string => decodeEntities(html.replace(/<br\b[^>]*>/gi, "\n").replace(/<\/?[A-Za-z][^>]*>/g, ""));

/**
 * An HTML page as the text a reader sees: its title, and its body without scripts, styles or markup.
 * Whitespace is collapsed as a browser does; block elements start new lines, list items read as `- `,
 * and preformatted text keeps its lines.
 */
export function htmlToText(html: string): { title: string | undefined; text: string } {
  const titleMatch = /<title\b[^>]*>([\s\S]*?)<\/title\s*>/i.exec(html);
  const title = titleMatch ? flatten(titleMatch[1]!).replace(/\s+/g, " ").trim() : "";
  // The page's own use of the placeholder character is dropped: it marks the preformatted blocks below.
  let body = html.replaceAll(mark, "").replace(/<!--[\s\S]*?(?:-->|$)/g, " ").replace(/<!\[CDATA\[[\s\S]*?(?:\]\]>|$)/g, " ").replace(/<![^>]*>|<\?[^>]*>/g, " ");
  for (const tag of hidden) body = body.replace(new RegExp(`<${tag}\\b[^>]*>[\\s\\S]*?(?:</${tag}\\s*>|$)`, "gi"), " ");
  // Preformatted blocks are set aside whole, so the collapsing below leaves their lines alone.
  const kept: string[] = [];
  body = body.replace(/<pre\b[^>]*>([\s\S]*?)(?:<\/pre\s*>|$)/gi, (_whole, inner: string) => `\n\n${mark}${kept.push(flatten(inner).replace(/^\n/, "").trimEnd()) - 1}${mark}\n\n`);
  body = body
    .replace(/\s+/g, " ")
    .replace(/<br\b[^>]*>/gi, "\n")
    .replace(/<li\b[^>]*>/gi, "\n- ")
    .replace(/<\/li\s*>/gi, "")
    .replace(/<\/?(?:t[dh])\b[^>]*>/gi, " ")
    .replace(new RegExp(`</?(?:${blocks})\\b[^>]*>`, "gi"), (tag) => (/^<\/?(?:p|h[1-6]|blockquote|table|ul|ol|section|article)\b/i.test(tag) ? "\n\n" : "\n"))
    .replace(/<\/?[A-Za-z][^>]*>/g, "");
  const text = tidy(decodeEntities(body)).replace(new RegExp(`${mark}(\\d+)${mark}`, "g"), (_whole, n: string) => kept[Number(n)] ?? "");
  return { title: title || undefined, text };
}
