import { conflict, type Db, type Queryable } from "@switchyard/runtime";
import type { SandboxContainer } from "@switchyard/contracts";
import { uidSlots, type ContainerSlot } from "../runners/types.js";
import { generationBase, restartedId, sessionBase } from "./ids.js";

interface ContainerRow {
  id: string;
  workspace_id: string;
  ended_at: Date | null;
  uid_slot: number | null;
}

export interface Owner {
  organizationId: string;
  workspaceId: string;
}

export interface ResolvedContainer extends ContainerSlot {
  /** A new container (or a revived name) that begins empty. */
  started: boolean;
  /** The live container this one replaced (a restart): its processes and files are to be removed. */
  replaced?: string;
}

const keyOf = (container: SandboxContainer) => (container.kind === "session" ? container.key : container.id);

/** A transaction-scoped advisory lock: held across replicas until the transaction ends. */
const lock = (tx: Queryable, key: string) => tx.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [key]);

/** The lowest slot no container holds, under a lock so that two starts never pick the same. */
async function freeSlot(tx: Queryable): Promise<number> {
  await lock(tx, "sandbox:uid-slots");
  const [row] = await tx.query<{ slot: number }>(
    "SELECT s AS slot FROM generate_series(0, $1::int - 1) AS s WHERE NOT EXISTS (SELECT 1 FROM sandbox.containers c WHERE c.uid_slot = s) ORDER BY s LIMIT 1",
    [uidSlots],
  );
  if (!row) throw conflict("Every sandbox user id is taken by a live container; try again once some are removed");
  return row.slot;
}

async function slotOf(tx: Queryable, row: ContainerRow): Promise<number> {
  if (row.uid_slot !== null) return row.uid_slot;
  const slot = await freeSlot(tx); // a container from before slots existed
  await tx.query("UPDATE sandbox.containers SET uid_slot = $2 WHERE id = $1", [row.id, slot]);
  return slot;
}

async function checkRoom(tx: Queryable, owner: Owner, maxLive: number) {
  const [row] = await tx.query<{ live: number }>("SELECT count(*)::int AS live FROM sandbox.containers WHERE workspace_id = $1 AND ended_at IS NULL", [owner.workspaceId]);
  if ((row?.live ?? 0) >= maxLive) {
    throw conflict(
      `This workspace already has ${maxLive} live sandbox containers, its limit (SANDBOX_MAX_CONTAINERS); a container is removed after it has been idle for its idle time, and a session's restart replaces its container`,
    );
  }
}

/**
 * The container a request means: live, or made now. One transaction, holding advisory locks on the
 * workspace and the name, so that replicas resolving the same session at once agree on one container
 * and the workspace's count of live containers is never passed.
 */
export function resolveContainer(db: Db, owner: Owner, container: SandboxContainer, restart: boolean, idleMs: number, maxLive: number): Promise<ResolvedContainer> {
  const origin = container.kind;
  const key = keyOf(container);
  return db.transaction(async (tx) => {
    await lock(tx, `sandbox:workspace:${owner.workspaceId}`);
    await lock(tx, origin === "reference" ? `sandbox:reference:${key}` : `sandbox:${origin}:${owner.workspaceId}:${key}`);
    const columns = "id, workspace_id, ended_at, uid_slot";
    const [latest] =
      origin === "reference"
        ? await tx.query<ContainerRow>(`SELECT ${columns} FROM sandbox.containers WHERE id = $1`, [key])
        : await tx.query<ContainerRow>(`SELECT ${columns} FROM sandbox.containers WHERE workspace_id = $1 AND origin = $2 AND origin_key = $3 ORDER BY created_at DESC LIMIT 1`, [
            owner.workspaceId,
            origin,
            key,
          ]);
    // A name is one container for good: another workspace's is not found, an ended one starts again empty.
    if (origin === "reference" && latest && latest.workspace_id !== owner.workspaceId) throw conflict(`The container name ${key} is taken; choose another`);
    if (latest && !latest.ended_at && !restart) {
      await touch(tx, latest.id, idleMs);
      return { id: latest.id, uidSlot: await slotOf(tx, latest), started: false };
    }
    if (origin === "reference") {
      // Revived, or restarted, under its own name: the caller empties it first. It keeps a slot it still holds.
      if (latest?.ended_at) await checkRoom(tx, owner, maxLive);
      if (latest) {
        const uidSlot = latest.uid_slot ?? (await freeSlot(tx));
        await tx.query("UPDATE sandbox.containers SET ended_at = NULL, created_at = now(), last_used_at = now(), idle_ms = $2, uid_slot = $3 WHERE id = $1", [key, idleMs, uidSlot]);
        return { id: key, uidSlot, started: true };
      }
      await checkRoom(tx, owner, maxLive);
      const uidSlot = await freeSlot(tx);
      if (!(await insert(tx, owner, key, "reference", key, idleMs, uidSlot))) throw conflict(`The container name ${key} is taken; choose another`);
      return { id: key, uidSlot, started: true };
    }
    let replaced: string | undefined;
    if (latest && !latest.ended_at) {
      await tx.query("UPDATE sandbox.containers SET ended_at = now() WHERE id = $1", [latest.id]);
      replaced = latest.id;
    }
    await checkRoom(tx, owner, maxLive);
    const base = origin === "session" ? sessionBase(key) : generationBase(key);
    const uidSlot = await freeSlot(tx);
    // The plain id is the first container's; after a restart, or when another workspace has the name, `-r<nonce>`.
    for (let tries = 0; tries < 5; tries += 1) {
      const id = latest || tries > 0 ? restartedId(base) : base;
      if (await insert(tx, owner, id, origin, key, idleMs, uidSlot)) return { id, uidSlot, started: true, ...(replaced ? { replaced } : {}) };
    }
    throw new Error(`could not name a container for ${base}`);
  });
}

/** False when the id is taken (by another workspace's container of the same name). */
async function insert(tx: Queryable, owner: Owner, id: string, origin: string, key: string, idleMs: number, uidSlot: number): Promise<boolean> {
  const rows = await tx.query(
    `INSERT INTO sandbox.containers (id, organization_id, workspace_id, origin, origin_key, idle_ms, uid_slot) VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (id) DO NOTHING RETURNING id`,
    [id, owner.organizationId, owner.workspaceId, origin, key, idleMs, uidSlot],
  );
  return rows.length > 0;
}

/** Marks a live container used now: when a call starts, and again when it ends. */
export async function touch(db: Queryable, id: string, idleMs?: number): Promise<void> {
  await db.query("UPDATE sandbox.containers SET last_used_at = now(), idle_ms = COALESCE($2, idle_ms) WHERE id = $1 AND ended_at IS NULL", [id, idleMs ?? null]);
}

/** The container's slot while it is live; undefined once it has ended (idle, or replaced). */
export async function liveSlot(db: Queryable, id: string): Promise<number | undefined> {
  const [row] = await db.query<{ uid_slot: number | null }>("SELECT uid_slot FROM sandbox.containers WHERE id = $1 AND ended_at IS NULL", [id]);
  return row?.uid_slot ?? undefined;
}

/** Live containers idle past their time, for the reaper. */
export async function idleContainers(db: Queryable, limit = 100): Promise<string[]> {
  const rows = await db.query<{ id: string }>(
    "SELECT id FROM sandbox.containers WHERE ended_at IS NULL AND last_used_at < now() - make_interval(secs => idle_ms / 1000.0) ORDER BY last_used_at LIMIT $1",
    [limit],
  );
  return rows.map((r) => r.id);
}

/** Containers not ended, idle or not. */
export async function liveContainers(db: Queryable, limit = 1000): Promise<string[]> {
  const rows = await db.query<{ id: string }>("SELECT id FROM sandbox.containers WHERE ended_at IS NULL ORDER BY last_used_at LIMIT $1", [limit]);
  return rows.map((r) => r.id);
}

/** Whether the container is still live and idle past its time: the reaper asks again once it holds the container. */
export async function stillIdle(db: Queryable, id: string): Promise<boolean> {
  const rows = await db.query("SELECT 1 FROM sandbox.containers WHERE id = $1 AND ended_at IS NULL AND last_used_at < now() - make_interval(secs => idle_ms / 1000.0)", [id]);
  return rows.length > 0;
}

/** Ended containers whose processes and files are not removed yet (a restart replaced them, or a removal failed). */
export async function unremovedContainers(db: Queryable, limit = 100): Promise<string[]> {
  const rows = await db.query<{ id: string }>("SELECT id FROM sandbox.containers WHERE ended_at IS NOT NULL AND uid_slot IS NOT NULL ORDER BY ended_at LIMIT $1", [limit]);
  return rows.map((r) => r.id);
}

/** Whether the container has ended and still holds its slot, asked again under its lock. */
export async function stillUnremoved(db: Queryable, id: string): Promise<boolean> {
  return (await db.query("SELECT 1 FROM sandbox.containers WHERE id = $1 AND ended_at IS NOT NULL AND uid_slot IS NOT NULL", [id])).length > 0;
}

/** An idle container's processes and files are gone: it ends and gives its slot back. */
export async function endRemoved(db: Queryable, id: string): Promise<void> {
  await db.query("UPDATE sandbox.containers SET ended_at = now(), uid_slot = NULL WHERE id = $1 AND ended_at IS NULL", [id]);
}

/** An ended container's processes and files are gone: its slot is free (unless its name was revived since). */
export async function releaseSlot(db: Queryable, id: string): Promise<void> {
  await db.query("UPDATE sandbox.containers SET uid_slot = NULL WHERE id = $1 AND ended_at IS NOT NULL", [id]);
}

/** How many file reports the container has had, by any replica. */
export async function reportCount(db: Queryable, id: string): Promise<number> {
  const [row] = await db.query<{ files_reports: number }>("SELECT files_reports FROM sandbox.containers WHERE id = $1", [id]);
  return row?.files_reports ?? 0;
}

export async function countReport(db: Queryable, id: string): Promise<number> {
  const [row] = await db.query<{ files_reports: number }>("UPDATE sandbox.containers SET files_reports = files_reports + 1 WHERE id = $1 RETURNING files_reports", [id]);
  return row?.files_reports ?? 0;
}
