import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type {
  AuthCode,
  CodeChallengeMethod,
  CreateAuthCodeBody,
  ExchangeAuthCodeBody,
  ExchangeAuthCodeResponse,
  LimitReset,
} from "@switchyard/contracts";
import { badRequest, conflict, forbidden, generateSecret, hashSecret, HttpError, isUniqueViolation, type Caller, type Queryable } from "@switchyard/runtime";
import { insertKey, updateKey, type KeyDeps } from "../keys/service.js";

const sha256 = (value: string) => createHash("sha256").update(value).digest();

export const hashCode = (code: string): string => sha256(code).toString("hex");

/** One stable app id per organization: Switchyard has no app registry, and the SDK wants an integer. */
export const appIdOf = (organizationId: string): number => sha256(`switchyard-app:${organizationId}`).readUInt32BE(0) >>> 1;

/** The longest key name `POST /keys` takes; a key named after an app is held to it as well. */
const keyNameChars = 100;

/** The name an app's title (`X-OpenRouter-Title` or `X-Title`) gives a key: null when it has none worth showing. */
export function keyNameFromTitle(title: string | null | undefined): string | null {
  const name = title?.trim().slice(0, keyNameChars).trim();
  return name ? name : null;
}

/**
 * `POST /auth/keys/code`: the code is returned once and only its SHA-256 is stored. A challenge without a
 * method is stored without one and checked as `plain` (RFC 7636 §4.3), unless the exchange names S256.
 * The key's name is the label asked for, else the title of the app that asked (as OpenRouter names it).
 */
export async function createAuthCode(
  db: Queryable,
  caller: Pick<Caller, "organizationId" | "workspaceId" | "keyHash">,
  body: CreateAuthCodeBody,
  appTitle: string | null = null,
): Promise<AuthCode> {
  if (body.code_challenge_method && !body.code_challenge) {
    throw badRequest("Invalid body: code_challenge_method: needs a code_challenge");
  }
  if (body.expires_at && Date.parse(body.expires_at) <= Date.now()) throw badRequest("Invalid body: expires_at: must be in the future");
  const workspaceId = body.workspace_id ?? caller.workspaceId;
  const workspace = await db.query(`SELECT 1 FROM identity.workspaces WHERE id = $1 AND organization_id = $2`, [
    workspaceId,
    caller.organizationId,
  ]);
  if (workspace.length === 0) throw badRequest("Invalid body: workspace_id: no such workspace");

  // Used and expired codes are worth nothing after a day; clearing them here needs no sweeper.
  await db.query(`DELETE FROM identity.auth_codes WHERE expires_at < now() - interval '1 day'`);
  const code = randomBytes(32).toString("base64url");
  const appId = appIdOf(caller.organizationId);
  try {
    const [row] = await db.query<{ created_at: Date }>(
      `INSERT INTO identity.auth_codes (code_hash, organization_id, workspace_id, created_by_key, callback_url,
         code_challenge, code_challenge_method, key_limit, limit_reset, key_expires_at, key_label, spawn_agent,
         spawn_cloud, app_id, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, now() + interval '10 minutes')
       RETURNING created_at`,
      [
        hashCode(code),
        caller.organizationId,
        workspaceId,
        caller.keyHash,
        body.callback_url,
        body.code_challenge ?? null,
        body.code_challenge_method ?? null,
        body.limit ?? null,
        body.usage_limit_type ?? null,
        body.expires_at ?? null,
        body.key_label ?? keyNameFromTitle(appTitle),
        body.spawn_agent ?? null,
        body.spawn_cloud ?? null,
        appId,
      ],
    );
    if (!row) throw new Error("auth code insert returned no row");
    return { id: code, app_id: appId, created_at: row.created_at.toISOString() };
  } catch (error) {
    if (isUniqueViolation(error)) throw conflict("resource conflict, retry later");
    throw error;
  }
}

interface UsedCodeRow {
  organization_id: string;
  workspace_id: string;
  code_challenge: string | null;
  code_challenge_method: CodeChallengeMethod | null;
  key_limit: string | null;
  limit_reset: LimitReset | null;
  key_expires_at: Date | null;
  key_label: string | null;
}

/** Every refusal looks the same, so a caller cannot tell an unknown code from a used one or a bad verifier. */
const invalidCode = () => forbidden("Invalid authorization code or code_verifier");

function verifierMatches(code: Pick<UsedCodeRow, "code_challenge" | "code_challenge_method">, body: ExchangeAuthCodeBody): boolean {
  if (code.code_challenge === null) return true;
  const method = code.code_challenge_method ?? body.code_challenge_method ?? "plain";
  // A code made for S256 must not be redeemable with the challenge itself as a plain verifier.
  if (body.code_challenge_method && body.code_challenge_method !== method) return false;
  if (!body.code_verifier) return false;
  const proof = method === "S256" ? sha256(body.code_verifier).toString("base64url") : body.code_verifier;
  return timingSafeEqual(sha256(proof), sha256(code.code_challenge));
}

/**
 * RFC 6749 §4.1.2: a code used twice may have been intercepted, so the key its first use minted is disabled
 * (not deleted: its usage stays on record and its owner sees why it stopped). Only a replay that would
 * otherwise have passed (the right verifier, or a code made without a challenge) revokes: someone holding
 * a stolen code without its verifier must not be able to switch off the legitimate client's key.
 */
async function revokeIfReplayed(deps: KeyDeps, body: ExchangeAuthCodeBody): Promise<void> {
  const [used] = await deps.db.query<Pick<UsedCodeRow, "organization_id" | "code_challenge" | "code_challenge_method"> & { key_hash: string }>(
    `SELECT organization_id::text, code_challenge, code_challenge_method, key_hash FROM identity.auth_codes
     WHERE code_hash = $1 AND used_at IS NOT NULL AND key_hash IS NOT NULL`,
    [hashCode(body.code)],
  );
  if (!used || !verifierMatches(used, body)) return;
  await updateKey(deps, used.organization_id, used.key_hash, { disabled: true }).catch((error: unknown) => {
    // Deleted meanwhile: nothing is left to revoke.
    if (!(error instanceof HttpError && error.status === 404)) throw error;
  });
}

/**
 * `POST /auth/keys`: one conditional UPDATE claims the code and the key is created in the same transaction,
 * so of concurrent exchanges exactly one commits a key. A refused verifier rolls back and leaves the code
 * usable. A code dies with the management key that made it (deleted, disabled or expired). A code that
 * cannot be claimed because it was used already revokes the key it minted (`revokeIfReplayed`).
 */
export async function exchangeAuthCode(deps: KeyDeps, body: ExchangeAuthCodeBody): Promise<ExchangeAuthCodeResponse> {
  const secret = generateSecret();
  const minted = await deps.db.transaction(async (tx) => {
    const [code] = await tx.query<UsedCodeRow>(
      `UPDATE identity.auth_codes c SET used_at = now(), key_hash = $2
       WHERE c.code_hash = $1 AND c.used_at IS NULL AND c.expires_at > now()
         AND (c.key_expires_at IS NULL OR c.key_expires_at > now())
         AND EXISTS (SELECT 1 FROM identity.api_keys k WHERE k.hash = c.created_by_key AND NOT k.disabled
                     AND (k.expires_at IS NULL OR k.expires_at > now()))
       RETURNING c.organization_id::text, c.workspace_id::text, c.code_challenge, c.code_challenge_method,
         c.key_limit::text, c.limit_reset, c.key_expires_at, c.key_label`,
      [hashCode(body.code), hashSecret(secret)],
    );
    if (!code) return false;
    if (!verifierMatches(code, body)) throw invalidCode();
    await insertKey(
      tx,
      deps.events,
      code.organization_id,
      code.workspace_id,
      {
        name: code.key_label ?? "PKCE key",
        limit: code.key_limit === null ? undefined : Number(code.key_limit),
        limit_reset: code.limit_reset,
        expires_at: code.key_expires_at?.toISOString() ?? null,
        is_management_key: false,
      },
      secret,
    );
    return true;
  });
  if (!minted) {
    await revokeIfReplayed(deps, body);
    throw invalidCode();
  }
  deps.events.committed();
  return { key: secret, user_id: null };
}
