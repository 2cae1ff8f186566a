import { conflict, isUniqueViolation, type Queryable } from "@switchyard/runtime";
import type { SandboxContainer } from "@switchyard/contracts";
import { generationBase, restartedId, sessionBase } from "./ids.js";

export interface ContainerRow {
  id: string;
  workspace_id: string;
  ended_at: Date | null;
}

export interface Owner {
  organizationId: string;
  workspaceId: string;
}

const keyOf = (container: SandboxContainer) => (container.kind === "session" ? container.key : container.id);

/** The container a request means: live, or made now. `started` says a new one (or a revived name) begins empty. */
export async function resolveContainer(db: Queryable, owner: Owner, container: SandboxContainer, restart: boolean, idleMs: number): Promise<{ id: string; started: boolean }> {
  const origin = container.kind;
  const key = keyOf(container);
  const [latest] =
    origin === "reference"
      ? await db.query<ContainerRow>("SELECT id, workspace_id, ended_at FROM sandbox.containers WHERE id = $1", [key])
      : await db.query<ContainerRow>(
          "SELECT id, workspace_id, ended_at FROM sandbox.containers WHERE workspace_id = $1 AND origin = $2 AND origin_key = $3 ORDER BY created_at DESC LIMIT 1",
          [owner.workspaceId, origin, key],
        );
  if (origin === "reference") {
    // A name is one container for good: another workspace's is not found, an ended one starts again empty.
    if (latest && latest.workspace_id !== owner.workspaceId) throw conflict(`The container name ${key} is taken; choose another`);
    if (latest && !latest.ended_at && !restart) {
      await touch(db, latest.id, idleMs);
      return { id: latest.id, started: false };
    }
    if (latest) {
      await db.query("UPDATE sandbox.containers SET ended_at = NULL, created_at = now(), last_used_at = now(), idle_ms = $2 WHERE id = $1", [key, idleMs]);
      return { id: key, started: true };
    }
    await insert(db, owner, key, "reference", key, idleMs);
    return { id: key, started: true };
  }
  if (latest && !latest.ended_at && !restart) {
    await touch(db, latest.id, idleMs);
    return { id: latest.id, started: false };
  }
  if (latest && !latest.ended_at) await db.query("UPDATE sandbox.containers SET ended_at = now() WHERE id = $1", [latest.id]);
  const base = origin === "session" ? sessionBase(key) : generationBase(key);
  // The plain id is the first container's; after a restart, or when another workspace has the name, `-r<nonce>`.
  for (let tries = 0; tries < 5; tries += 1) {
    const id = latest || tries > 0 ? restartedId(base) : base;
    try {
      await insert(db, owner, id, origin, key, idleMs);
      return { id, started: true };
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
    }
  }
  throw new Error(`could not name a container for ${base}`);
}

async function insert(db: Queryable, owner: Owner, id: string, origin: string, key: string, idleMs: number) {
  await db.query(
    "INSERT INTO sandbox.containers (id, organization_id, workspace_id, origin, origin_key, idle_ms) VALUES ($1, $2, $3, $4, $5, $6)",
    [id, owner.organizationId, owner.workspaceId, origin, key, idleMs],
  );
}

export async function touch(db: Queryable, id: string, idleMs?: number): Promise<void> {
  await db.query("UPDATE sandbox.containers SET last_used_at = now(), idle_ms = COALESCE($2, idle_ms) WHERE id = $1", [id, idleMs ?? null]);
}

/** Live containers idle past their time, for the reaper. */
export async function idleContainers(db: Queryable, limit = 100): Promise<string[]> {
  const rows = await db.query<{ id: string }>(
    "SELECT id FROM sandbox.containers WHERE ended_at IS NULL AND last_used_at < now() - make_interval(secs => idle_ms / 1000.0) ORDER BY last_used_at LIMIT $1",
    [limit],
  );
  return rows.map((r) => r.id);
}

export async function endContainer(db: Queryable, id: string): Promise<void> {
  await db.query("UPDATE sandbox.containers SET ended_at = now() WHERE id = $1 AND ended_at IS NULL", [id]);
}
