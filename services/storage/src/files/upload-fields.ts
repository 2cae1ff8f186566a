import { badRequest } from "@switchyard/runtime";

/** OpenAI's upload purposes. Our own storage keeps a file for every one of them alike. */
const purposes = new Set(["assistants", "batch", "fine-tune", "vision", "user_data", "evals"]);

/** OpenAI's bounds on `expires_after[seconds]`: an hour to 30 days after `created_at`. */
const expiry = { anchor: "created_at", minSeconds: 3600, maxSeconds: 2_592_000 } as const;

export interface UploadFields {
  purpose: string | undefined;
  /** OpenAI only: when the file expires, as its upload form takes it. */
  expiresAfter: { anchor: "created_at"; seconds: number } | undefined;
}

const one = (fields: Record<string, string | string[]>, name: string): string | undefined => {
  const value = fields[name];
  if (Array.isArray(value)) throw badRequest(`Invalid body: ${name}: send it once`);
  return value;
};

/**
 * The form fields of `POST /files` beside its file, checked for where the file goes: a field is taken only
 * where it has its effect. Our own storage keeps files until deleted (as OpenRouter's does), so it refuses an
 * expiry; Anthropic's Files API has neither a purpose nor an expiry; OpenAI's takes both.
 */
export function uploadFields(fields: Record<string, string | string[]>, provider: "openai" | "anthropic" | undefined): UploadFields {
  const known = new Set(["purpose", "expires_after[anchor]", "expires_after[seconds]"]);
  const unknown = Object.keys(fields).find((name) => !known.has(name));
  if (unknown !== undefined) throw badRequest(`Invalid body: unknown field ${unknown}; an upload takes file, purpose and (with provider=openai) expires_after`);
  const purpose = one(fields, "purpose");
  const anchor = one(fields, "expires_after[anchor]");
  const seconds = one(fields, "expires_after[seconds]");
  if (purpose !== undefined && provider === "anthropic") throw badRequest("Invalid body: purpose: Anthropic's Files API takes none");
  if (purpose !== undefined && !purposes.has(purpose)) throw badRequest(`Invalid body: purpose: must be one of ${[...purposes].join(", ")}`);
  if (anchor === undefined && seconds === undefined) return { purpose, expiresAfter: undefined };
  if (provider !== "openai") {
    throw badRequest(`Invalid body: expires_after: ${provider === "anthropic" ? "Anthropic's Files API takes none" : "workspace files do not expire; delete a file to remove it"}`);
  }
  if (anchor !== expiry.anchor) throw badRequest(`Invalid body: expires_after[anchor]: must be ${expiry.anchor}`);
  const count = Number(seconds);
  if (!/^\d+$/.test(seconds ?? "") || count < expiry.minSeconds || count > expiry.maxSeconds) {
    throw badRequest(`Invalid body: expires_after[seconds]: must be a whole number from ${expiry.minSeconds} to ${expiry.maxSeconds}`);
  }
  return { purpose, expiresAfter: { anchor: expiry.anchor, seconds: count } };
}
