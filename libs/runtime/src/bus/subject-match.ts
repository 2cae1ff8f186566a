/** NATS-style subject matching: `*` is one token, `>` is one or more trailing tokens. */
export function subjectMatches(pattern: string, subject: string): boolean {
  const p = pattern.split(".");
  const s = subject.split(".");
  for (let i = 0; i < p.length; i++) {
    if (p[i] === ">") return s.length > i;
    if (i >= s.length) return false;
    if (p[i] !== "*" && p[i] !== s[i]) return false;
  }
  return p.length === s.length;
}

/**
 * Checks a consume/listen subject: non-empty tokens, `>` only last. With `durable`, the first token must be
 * a literal domain, since a durable consumer lives in its domain's stream.
 */
export function assertSubjectPattern(pattern: string, durable: boolean): void {
  const tokens = pattern.split(".");
  const valid = tokens.every((t, i) => t.length > 0 && !/\s/.test(t) && (t === ">" ? i === tokens.length - 1 : !/[*>]/.test(t) || t === "*"));
  if (!valid) throw new Error(`invalid subject pattern: "${pattern}"`);
  if (durable && (tokens[0] === "*" || tokens[0] === ">")) {
    throw new Error(`a durable consumer's subject must start with its domain, not a wildcard: "${pattern}"`);
  }
}
