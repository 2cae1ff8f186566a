import { randomUUID } from "node:crypto";
import type { CreatePresetBody, Preset, PresetVersion, PresetWithVersion } from "@switchyard/contracts";
import { badRequest, notFound, type Db, type Queryable } from "@switchyard/runtime";

interface PresetRow {
  id: string;
  workspace_id: string;
  slug: string;
  name: string;
  description: string | null;
  status: string;
  status_updated_at: Date | null;
  designated_version_id: string;
  creator_user_id: string;
  created_at: Date;
  updated_at: Date;
}

interface VersionRow {
  id: string;
  preset_id: string;
  version: number;
  system_prompt: string;
  config: PresetVersion["config"];
  creator_id: string;
  created_at: Date;
  updated_at: Date;
}

const presetColumns = `id::text, workspace_id::text, slug, name, description, status, status_updated_at,
  designated_version_id::text, creator_user_id, created_at, updated_at`;
const versionColumns = `id::text, preset_id::text, version, system_prompt, config, creator_id, created_at, updated_at`;

const toPreset = (row: PresetRow): Preset => ({
  id: row.id,
  slug: row.slug,
  name: row.name,
  description: row.description,
  status: row.status,
  status_updated_at: row.status_updated_at?.toISOString() ?? null,
  designated_version_id: row.designated_version_id,
  workspace_id: row.workspace_id,
  creator_user_id: row.creator_user_id,
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at.toISOString(),
});

const toVersion = (row: VersionRow): PresetVersion => ({
  id: row.id,
  preset_id: row.preset_id,
  version: row.version,
  system_prompt: row.system_prompt,
  config: row.config,
  creator_id: row.creator_id,
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at.toISOString(),
});

const presetNotFound = () => notFound("Preset not found");

/** Request fields a preset does not pin: the conversation itself and the transport. */
const unpinned = new Set(["messages", "stream", "stream_options", "name", "description", "system_prompt", "preset"]);

/** A version's config from a chat request body: every pinned parameter, nothing conversational. */
export function configFromRequest(body: CreatePresetBody): PresetVersion["config"] {
  return Object.fromEntries(Object.entries(body).filter(([k, v]) => !unpinned.has(k) && v !== undefined));
}

/** Roles whose message is the system prompt. */
const systemRoles = new Set(["system", "developer"]);

/** A message's content as text: a string, or text parts joined; undefined for other content. */
function textOf(content: unknown): string | undefined {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return undefined;
  const parts = content as Array<{ type?: unknown; text?: unknown }>;
  if (!parts.every((p) => typeof p === "object" && p !== null && p.type === "text" && typeof p.text === "string")) return undefined;
  return parts.map((p) => p.text).join("");
}

/**
 * The system prompt a version carries: given directly, or the request's first system (or developer)
 * message, its content a string or text parts. Other content there is refused with a 400 naming the field.
 */
export function systemPromptFrom(body: Pick<CreatePresetBody, "system_prompt" | "messages">): string {
  if (body.system_prompt !== undefined) return body.system_prompt;
  for (const [index, message] of (body.messages ?? []).entries()) {
    const m = message as { role?: unknown; content?: unknown } | null;
    if (typeof m?.role !== "string" || !systemRoles.has(m.role)) continue;
    const text = textOf(m.content);
    if (text === undefined) throw badRequest(`Invalid body: messages.${index}.content: a system prompt must be a string or text parts`);
    return text;
  }
  return "";
}

export interface Scope {
  organizationId: string;
  workspaceId: string;
}

/**
 * Creates the preset from a chat request, or adds the next version to an existing one and designates it.
 * The preset row is locked while the version number is chosen, so concurrent writers get distinct versions.
 */
export async function savePresetVersion(db: Db, scope: Scope, slug: string, body: CreatePresetBody, creator: string): Promise<PresetWithVersion> {
  return db.transaction(async (tx) => {
    const config = configFromRequest(body);
    const systemPrompt = systemPromptFrom(body);
    const versionId = randomUUID();
    let [preset] = await tx.query<PresetRow>(
      `SELECT ${presetColumns} FROM catalog.presets WHERE workspace_id = $1 AND slug = $2 FOR UPDATE`,
      [scope.workspaceId, slug],
    );
    if (!preset) {
      [preset] = await tx.query<PresetRow>(
        `INSERT INTO catalog.presets (id, organization_id, workspace_id, slug, name, description, status_updated_at,
           designated_version_id, creator_user_id)
         VALUES ($1, $2, $3, $4, $5, $6, now(), $7, $8)
         ON CONFLICT (workspace_id, slug) DO NOTHING RETURNING ${presetColumns}`,
        [randomUUID(), scope.organizationId, scope.workspaceId, slug, body.name ?? slug, body.description ?? null, versionId, creator],
      );
      // Lost a race with a concurrent creator: continue as a new version of theirs.
      preset ??= (
        await tx.query<PresetRow>(`SELECT ${presetColumns} FROM catalog.presets WHERE workspace_id = $1 AND slug = $2 FOR UPDATE`, [
          scope.workspaceId,
          slug,
        ])
      )[0];
    }
    if (!preset) throw new Error("preset vanished while saving a version");
    const [next] = await tx.query<{ n: number }>(
      `SELECT COALESCE(max(version), 0)::int + 1 AS n FROM catalog.preset_versions WHERE preset_id = $1`,
      [preset.id],
    );
    const [version] = await tx.query<VersionRow>(
      `INSERT INTO catalog.preset_versions (id, preset_id, version, system_prompt, config, creator_id)
       VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${versionColumns}`,
      [versionId, preset.id, next?.n ?? 1, systemPrompt, JSON.stringify(config), creator],
    );
    const [updated] = await tx.query<PresetRow>(
      `UPDATE catalog.presets SET designated_version_id = $2, updated_at = clock_timestamp(),
         name = COALESCE($3, name), description = CASE WHEN $5 THEN $4 ELSE description END
       WHERE id = $1 RETURNING ${presetColumns}`,
      [preset.id, versionId, body.name ?? null, body.description ?? null, body.description !== undefined],
    );
    return { ...toPreset(updated!), designated_version: toVersion(version!) };
  });
}

async function presetRow(db: Queryable, scope: Scope, slug: string): Promise<PresetRow> {
  const [row] = await db.query<PresetRow>(`SELECT ${presetColumns} FROM catalog.presets WHERE workspace_id = $1 AND slug = $2`, [
    scope.workspaceId,
    slug,
  ]);
  if (!row) throw presetNotFound();
  return row;
}

export async function getPreset(db: Queryable, scope: Scope, slug: string): Promise<PresetWithVersion> {
  const row = await presetRow(db, scope, slug);
  const [version] = await db.query<VersionRow>(`SELECT ${versionColumns} FROM catalog.preset_versions WHERE id = $1`, [
    row.designated_version_id,
  ]);
  if (!version) throw presetNotFound();
  return { ...toPreset(row), designated_version: toVersion(version) };
}

export async function listPresets(db: Queryable, scope: Scope, offset: number, limit: number) {
  const [count] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM catalog.presets WHERE workspace_id = $1`, [scope.workspaceId]);
  const rows = await db.query<PresetRow>(
    `SELECT ${presetColumns} FROM catalog.presets WHERE workspace_id = $1 ORDER BY created_at, id LIMIT $2 OFFSET $3`,
    [scope.workspaceId, limit, offset],
  );
  return { data: rows.map(toPreset), total_count: count?.n ?? 0 };
}

export async function listPresetVersions(db: Queryable, scope: Scope, slug: string, offset: number, limit: number) {
  const preset = await presetRow(db, scope, slug);
  const [count] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM catalog.preset_versions WHERE preset_id = $1`, [preset.id]);
  const rows = await db.query<VersionRow>(
    `SELECT ${versionColumns} FROM catalog.preset_versions WHERE preset_id = $1 ORDER BY version LIMIT $2 OFFSET $3`,
    [preset.id, limit, offset],
  );
  return { data: rows.map(toVersion), total_count: count?.n ?? 0 };
}

export async function getPresetVersion(db: Queryable, scope: Scope, slug: string, version: number): Promise<PresetVersion> {
  const preset = await presetRow(db, scope, slug);
  const [row] = await db.query<VersionRow>(`SELECT ${versionColumns} FROM catalog.preset_versions WHERE preset_id = $1 AND version = $2`, [
    preset.id,
    version,
  ]);
  if (!row) throw notFound("Preset version not found");
  return toVersion(row);
}

/** Makes an existing version the one `@preset/<slug>` uses. */
export async function designateVersion(db: Db, scope: Scope, slug: string, version: number): Promise<PresetWithVersion> {
  const target = await getPresetVersion(db, scope, slug, version);
  await db.query(`UPDATE catalog.presets SET designated_version_id = $3, updated_at = clock_timestamp() WHERE workspace_id = $1 AND slug = $2`, [
    scope.workspaceId,
    slug,
    target.id,
  ]);
  return getPreset(db, scope, slug);
}

export async function deletePreset(db: Queryable, scope: Scope, slug: string): Promise<void> {
  const deleted = await db.query(`DELETE FROM catalog.presets WHERE workspace_id = $1 AND slug = $2 RETURNING id`, [scope.workspaceId, slug]);
  if (deleted.length === 0) throw presetNotFound();
}
