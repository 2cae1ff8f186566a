/**
 * What a provider needs to continue from its reasoning travels in a reasoning item's `encrypted_content`,
 * the one field clients such as Codex send back beside the summary and the reasoning text. OpenAI's
 * encrypted reasoning goes as OpenAI gave it; another provider's carries a mark in front that says what it
 * is, whose format it is and which entry it belongs to:
 *
 * - `switchyard:signature:<format>:<id>:<value>`: a thinking block's signature (Anthropic's); the block's
 *   text is the item's reasoning text, or its summary when the request asked for one.
 * - `switchyard:encrypted:<format>:<id>:<value>`: encrypted reasoning (Anthropic's redacted thinking,
 *   Gemini's thought signature with the id of the call it belongs to).
 *
 * `<id>` is URI-encoded and may be empty. Content without a mark is OpenAI's.
 */

/** The `format` of OpenAI's Responses reasoning entries. */
export const openAiFormat = "openai-responses-v1";
/** The `format` of Anthropic's thinking blocks. */
export const anthropicFormat = "anthropic-claude-v1";
/** The format named when a provider gave its reasoning none. */
const unnamedFormat = "unknown";

type Kind = "signature" | "encrypted";
const mark = /^switchyard:(signature|encrypted):([A-Za-z0-9_.-]+):([^:]*):/;

/** What a marked `encrypted_content` holds. */
export interface Unsealed {
  kind: Kind;
  format: string;
  /** The entry's id (Gemini's: the call the signature belongs to); absent when it had none. */
  id?: string;
  value: string;
}

/** A value behind its mark. */
const seal = (kind: Kind, value: string, format: string | undefined, id: string | undefined): string =>
  `switchyard:${kind}:${format || unnamedFormat}:${encodeURIComponent(id ?? "")}:${value}`;

/** What a reasoning item of an answer sends back: a thinking block's signature, or encrypted reasoning. */
export interface Continuation {
  signature?: string;
  encrypted?: string;
  format?: string;
  /** The provider's id of the entry the data belongs to. */
  entryId?: string;
}

/** The `encrypted_content` of a reasoning item: OpenAI's data as it is, another provider's behind its mark. */
export function encryptedContent(r: Continuation): string | undefined {
  if (r.signature) return seal("signature", r.signature, r.format, r.entryId);
  if (!r.encrypted) return undefined;
  return r.format === openAiFormat ? r.encrypted : seal("encrypted", r.encrypted, r.format, r.entryId);
}

/** A URI-encoded id; one that does not decode stays as it came. */
function decoded(id: string): string {
  try {
    return decodeURIComponent(id);
  } catch {
    return id;
  }
}

/** A marked `encrypted_content` taken apart; undefined for content without a mark (OpenAI's). */
export function unseal(content: string): Unsealed | undefined {
  const found = mark.exec(content);
  if (!found) return undefined;
  const id = decoded(found[3]!);
  return { kind: found[1] as Kind, format: found[2]!, ...(id ? { id } : {}), value: content.slice(found[0].length) };
}
