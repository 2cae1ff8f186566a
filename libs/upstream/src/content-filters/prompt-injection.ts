import type { Detector } from "./text.js";

/*
 * Phrases of common prompt-injection techniques, matched case-insensitively. Each is a first word (one of a
 * few alternatives) and then word alternatives with a bounded number of optional words between them; the
 * parts of a repeated group (a word, the whitespace after it) cannot match the same characters, so an
 * attempt costs at most a few passes over the stretch of text it looks at. A phrase is only tried where a
 * word starts with the first three letters of one of its first words (the shared lexing finds the word
 * starts; a table gives the phrases of each three letters), so most words cost one lookup.
 *
 * They are cues, not a classifier: a paraphrase ("kindly set aside what you were told earlier") passes, and
 * a text quoting an attack (a security write-up) matches. Benign phrasings close to an attack are left
 * alone on purpose: "ignore my previous message", "please disregard the above.", "enable developer mode on
 * my phone".
 */

const filler = (words: string, max: number) => String.raw`(?:(?:${words})\s+){0,${max}}`;
const rules =
  "rules|guidelines|guardrails|restrictions|safeguards|policies|policy|limitations|limits|constraints|filters|protocols|programming|training|ethics|morals|principles";
/** Without "dan" and "stan", which are also a name and a word: those need "you are now", "act as", "mode". */
const unbound = "jailbroken|unrestricted|unfiltered|uncensored|unchained|unbound";
const unrestricted = `dan|stan|${unbound}`;
const ignore = "ignore|disregard|forget|skip|overlook|discard|abandon|override|neglect|drop";
const disable = "bypass|circumvent|disable|deactivate|turn\\s+off|switch\\s+off|evade|get\\s+around|remove|suspend|break";
const reveal = "reveal|show|print|display|output|repeat|tell|give|share|leak|dump|expose|recite|disclose|write\\s+out|spell\\s+out|copy";

/** [first words, the rest of the phrase]: the phrase is `(?:first)rest`. */
const phrases: [first: string, rest: string][] = [
  // ignore / disregard / forget the previous instructions
  [
    ignore,
    String.raw`\s+${filler("all|any|the|your|my|its|of|these|those|every|and", 4)}(?:previous|prior|preceding|above|earlier|former|original|initial|foregoing|system|developer)\s+(?:\w+\s+){0,2}?(?:instructions?|directions?|prompts?|directives?|commands?|rules|guidelines)\b`,
  ],
  ["ignore|disregard|forget", String.raw`\s+(?:all\s+)?(?:of\s+)?(?:the\s+|everything\s+)?(?:above|previous|preceding)(?=\s*(?:and\b|[,;:]))`],
  [
    "ignore|disregard|forget",
    String.raw`\s+(?:everything|anything|all)\s+(?:(?:you(?:'ve|\s+have)?|that|i|we)\s+(?:were\s+|was\s+|have\s+been\s+|been\s+)?)?(?:told|said|instructed|taught|wrote|written|given|above|before|previously|so\s+far)\b`,
  ],
  [`${ignore}|${disable}`, String.raw`\s+${filler("all|any|the|of|its|their", 3)}your\s+(?:own\s+)?(?:${rules}|instructions|directives|system\s+prompt)\b`],
  [
    `${ignore}|${disable}`,
    String.raw`\s+${filler("all|any|the|your|of|its|their|openai's|anthropic's", 3)}(?:safety|content|ethical|moral|security|moderation|openai|anthropic)\s+(?:${rules}|measures|settings|checks|systems?|layers?)\b`,
  ],
  // reveal the system prompt
  [
    reveal,
    String.raw`\s+(?:me\s+|us\s+)?${filler("all|the|your|its|of|full|entire|complete|exact|original|initial|hidden|secret|internal|verbatim|raw|whole", 4)}(?:system|developer|hidden|secret|initial|original|internal)\s+(?:prompt|message|instructions?|directives?)\b`,
  ],
  [
    reveal,
    String.raw`\s+(?:me\s+|us\s+)?${filler("all|the|of|full|entire|complete|exact", 2)}your\s+(?:(?:full|entire|exact|initial|original|hidden|secret|system|internal)\s+)?(?:prompt|instructions|directives|configuration|rules)\b`,
  ],
  ["what", String.raw`\s+(?:is|are|were|was)\s+your\s+(?:(?:exact|full|initial|original|hidden|secret|system)\s+)?(?:system\s+prompt|prompt|instructions)\b`],
  ["repeat", String.raw`\s+(?:the\s+|all\s+)?(?:words|text|everything|lines?|content)\s+(?:written\s+)?(?:above|before\s+this|at\s+the\s+(?:start|beginning))\b`],
  // role change: you are now ..., act as DAN, developer mode
  ["you", String.raw`\s*(?:are|'re|’re)\s+now\s+(?:${unrestricted})\b`],
  [
    "you",
    String.raw`\s*(?:are|'re|’re)\s+(?:now\s+)?(?:a\s+|an\s+|in\s+)?(?:${unbound}|evil\s+(?:ai|assistant|bot|model)|free\s+(?:from|of)\s+(?:all\s+|any\s+|your\s+)?(?:${rules}))\b`,
  ],
  ["you", String.raw`\s*(?:are|'re|’re)\s+no\s+longer\s+(?:an?\s+)?(?:ai|assistant|language\s+model|chatgpt|claude|bound|restricted|limited|required|constrained)\b`],
  ["you", String.raw`\s+(?:have|'ve\s+got|now\s+have)\s+no\s+(?:${rules}|ethical\s+guidelines|content\s+polic(?:y|ies))\b`],
  ["you|chatgpt|assistant", String.raw`\s+(?:are\s+)?(?:now\s+)?(?:with|in)\s+(?:the\s+)?developer\s+mode\b`],
  [
    "act|behave|respond|answer|roleplay|role-play|pose",
    String.raw`\s+(?:as|like)\s+(?:a\s+|an\s+)?(?:${unrestricted}|dude|aim|evil\s+(?:ai|assistant|bot|model|confidant))\b`,
  ],
  ["do", String.raw`\s+anything\s+now\b`],
  [`developer|god|sudo|jailbreak|${unrestricted}`, String.raw`\s+mode\s+(?:enabled|activated|engaged)\b`],
  [
    "enable|enter|activate|engage|switch\\s+to|turn\\s+on|simulate|emulate",
    String.raw`\s+(?:the\s+)?(?:god|sudo|jailbreak|${unrestricted})\s+mode\b|\s+(?:the\s+)?developer\s+mode\s+(?:for|of)\s+(?:yourself|chatgpt|the\s+(?:ai|assistant|model))\b`,
  ],
  ["simulate|emulate", String.raw`\s+(?:the\s+)?developer\s+mode\b`],
  ["jailbreak|jailbroken", String.raw`\s+(?:mode|prompt|enabled|activated|successful)\b`],
  // pretend there are no rules
  [
    "pretend|imagine|assume|suppose|act\\s+as\\s+if|behave\\s+as\\s+if|hypothetically",
    String.raw`\s+(?:that\s+)?(?:you\s+(?:have|had|are|were)\s+(?:no|not\s+bound\s+by|free\s+(?:from|of)|without)\s+(?:any\s+)?(?:${rules})|there\s+(?:are|were|is)\s+no\s+(?:${rules}))\b`,
  ],
  ["bound", String.raw`\s+by\s+no\s+(?:${rules})\b|\s+by\s+(?:any\s+|your\s+)?(?:${rules}|openai|anthropic|safety)\s+(?:any\s+)?(?:more|longer)\b`],
  ["no\\s+longer|not", String.raw`\s+bound\s+by\s+(?:any\s+|your\s+|the\s+)?(?:${rules}|openai|anthropic|safety)\b`],
  [
    rules,
    String.raw`\s+(?:no\s+longer\s+appl(?:y|ies)|(?:are|have\s+been|were)\s+(?:now\s+)?(?:lifted|removed|disabled|suspended|turned\s+off|revoked))\b`,
  ],
  [
    "answer|respond|reply|speak|talk|write",
    String.raw`\s+(?:freely\s+)?without\s+(?:any\s+)?(?:restrictions|filters|filtering|censorship|limitations|moral|ethical|safety)\b`,
  ],
  ["do\\s+not|don't|don’t|never", String.raw`\s+(?:follow|obey|adhere\s+to|abide\s+by)\s+(?:any\s+of\s+)?(?:your|openai's|anthropic's)\s+(?:${rules}|instructions|content\s+policy)\b`],
  // injected instructions
  ["new|updated|revised|real|actual|true|additional", String.raw`\s+(?:system\s+)?instructions?\s*:`],
  [
    "previous|above|prior|earlier|original",
    String.raw`\s+instructions\s+(?:are|were)\s+(?:fake|false|wrong|void|cancel+ed|a\s+test|outdated|obsolete|no\s+longer\s+valid)\b`,
  ],
  [
    "from",
    String.raw`\s+now\s+on,?\s+you\s+(?:will|are|must|shall|should)\s+(?:ignore|disregard|not\s+(?:follow|obey|refuse)|answer\s+without|respond\s+without|act\s+as|be\s+(?:${unrestricted}))\b`,
  ],
  ["system|admin|administrator|developer", String.raw`\s+override\b`],
  ["start|begin", String.raw`\s+your\s+(?:response|reply|answer)\s+with\s+["'“]?sure,?\s+here\b`],
];

/** Chat-template tokens written into a message: <|im_start|>, <|system|>, <|endoftext|>. */
const templateToken = /<\|(?:im_start|im_end|system|endoftext)\|>/g;

const letterIndex = (c: number) => {
  const lower = c | 0x20;
  return c < 128 && lower >= 97 && lower <= 122 ? lower - 96 : 0;
};
/** A word's key: its first three letters (fewer for shorter words), each 1–26, as one number below 27³. */
const keyAt = (codes: Uint16Array, i: number) => {
  const a = letterIndex(codes[i] ?? 0);
  const b = letterIndex(codes[i + 1] ?? 0);
  const c = b ? letterIndex(codes[i + 2] ?? 0) : 0;
  return a * 729 + b * 27 + c;
};

/** For each key, the one sticky regex of every phrase with a first word of that key (index + 1; 0 for none). */
const byKey = new Uint8Array(27 * 27 * 27);
const keyed: RegExp[] = [];
{
  const sources = new Map<number, string[]>();
  for (const [first, rest] of phrases) {
    for (const word of first.split("|")) {
      const key = keyAt(Uint16Array.from(word, (ch) => ch.charCodeAt(0)), 0);
      const list = sources.get(key) ?? [];
      list.push(`(?:${first})${rest}`);
      sources.set(key, list);
    }
  }
  for (const [key, list] of sources) {
    keyed.push(new RegExp([...new Set(list)].join("|"), "iy"));
    byKey[key] = keyed.length;
  }
}

/** Spans of prompt-injection phrases: each word start's key picks the phrases tried there. */
export const detectPromptInjection: Detector = (scan, found) => {
  const { text, codes, words } = scan;
  let reach = 0;
  for (let w = 0; w < words.length; w++) {
    const i = words[w]!;
    if (i < reach) continue;
    const slot = byKey[keyAt(codes, i)]!;
    if (!slot) continue;
    const phrase = keyed[slot - 1]!;
    phrase.lastIndex = i;
    if (!phrase.exec(text)) continue;
    found.push({ start: i, end: phrase.lastIndex });
    reach = phrase.lastIndex;
  }
  if (text.includes("<|")) {
    templateToken.lastIndex = 0;
    for (let m = templateToken.exec(text); m; m = templateToken.exec(text)) found.push({ start: m.index, end: m.index + m[0].length });
  }
};
