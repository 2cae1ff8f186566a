import type { HoldRequest } from "@switchyard/contracts";
import { toPico, type Queryable } from "@switchyard/runtime";
import { boundSql } from "./unbound-holds.js";

/**
 * Unbound holds of an embedded database (PGlite), kept in this process's memory instead of in rows.
 *
 * Only one process can open an embedded database, so every hold decision, charge and release on it runs
 * here, and sees these holds as surely as it would see rows: the limited path adds them to what the
 * database holds. A hold row of an unbound request gives nothing more there. It would not outlive the
 * process either: a restart frees its previous run's holds. Writing and deleting that row was the largest
 * part of a standalone gateway's CPU per request; a request whose key is known to be unbound now takes no
 * statement to be held.
 *
 * Whether a key is unbound is read once and remembered until a write that could change it (a key's limit,
 * a credit limit, a budget). Such a write forgets everything remembered when it starts and when it ends,
 * and while it runs nothing is remembered or trusted: those requests take the database's path. A read
 * that began before a change and ends after the change began is not trusted either (the version moved).
 * A read that begins after a change ended reads what it committed, also when the change joined a
 * transaction still open (catalog's, writing a budget): on PGlite a statement waits for an open transaction.
 * So a request is held in memory only on a decision no change has overtaken.
 */

interface Hold {
  keyHash: string;
  organizationId: string;
  amount: bigint;
  isByok: boolean;
  expiresAt: number;
}

/** What decides whether a key's requests are unbound: BYOK ones and the others are bound differently. */
interface Binding {
  organizationId: string;
  bound: boolean;
  boundByok: boolean;
}

/** The most keys whose binding is remembered; the oldest is forgotten first. */
const maxBindings = 10_000;

/** Expired holds count for nothing; they are forgotten this long after expiring, as their rows are deleted. */
export const expiredGraceMs = 60_000;

const bound = (byok: string) => boundSql({ key: "k", hash: "k.hash", organization: "o", byok });

const readBinding = async (db: Queryable, keyHash: string): Promise<Binding | undefined> => {
  const [row] = await db.query<{ organization_id: string; bound: boolean; bound_byok: boolean }>(
    `SELECT k.organization_id::text, ${bound("false")} AS bound, ${bound("true")} AS bound_byok
     FROM identity.api_keys k LEFT JOIN identity.organizations o ON o.id = k.organization_id WHERE k.hash = $1`,
    [keyHash],
  );
  return row && { organizationId: row.organization_id, bound: row.bound, boundByok: row.bound_byok };
};

export class MemoryHolds {
  private readonly holds = new Map<string, Hold>();
  private readonly bindings = new Map<string, Binding>();
  private version = 0;
  private changing = 0;

  constructor(private readonly now: () => number = Date.now) {}

  /**
   * Holds the request in memory when its key is unbound and says so (true); false when a limit, budget or
   * credit limit binds it; undefined when the database must decide (a change is being written, or the key
   * is not found).
   */
  async hold(db: Queryable, request: HoldRequest): Promise<boolean | undefined> {
    if (this.changing > 0) return undefined;
    let binding = this.bindings.get(request.key_hash);
    if (!binding) {
      const version = this.version;
      binding = await readBinding(db, request.key_hash);
      if (!binding || version !== this.version || this.changing > 0) return undefined;
      if (this.bindings.size >= maxBindings) this.bindings.delete(this.bindings.keys().next().value!);
      this.bindings.set(request.key_hash, binding);
    }
    if (request.is_byok ? binding.boundByok : binding.bound) return false;
    this.holds.set(request.generation_id, {
      keyHash: request.key_hash,
      organizationId: binding.organizationId,
      amount: toPico(request.amount_usd),
      isByok: request.is_byok,
      expiresAt: this.now() + request.ttl_ms,
    });
    return true;
  }

  /** Runs a write that may bind or unbind keys; see the class's comment. */
  async whileChanging<T>(change: () => Promise<T>): Promise<T> {
    this.forget(1);
    try {
      return await change();
    } finally {
      this.forget(-1);
    }
  }

  private forget(step: number): void {
    this.changing += step;
    this.version++;
    this.bindings.clear();
  }

  /** What the key's other live holds here amount to; BYOK ones only when they count. */
  heldByKey(keyHash: string, generationId: string, withByok: boolean): bigint {
    return this.sum((hold, id) => hold.keyHash === keyHash && id !== generationId && (withByok || !hold.isByok));
  }

  /** What the organization's other live holds here amount to, BYOK excluded (it spends no credits). */
  heldByOrganization(organizationId: string, generationId: string): bigint {
    return this.sum((hold, id) => hold.organizationId === organizationId && id !== generationId && !hold.isByok);
  }

  private sum(counts: (hold: Hold, generationId: string) => boolean): bigint {
    const now = this.now();
    let total = 0n;
    for (const [id, hold] of this.holds) if (hold.expiresAt > now && counts(hold, id)) total += hold.amount;
    return total;
  }

  /** Forgets the generations' holds (charged, released, or held again in a row); returns how many it had. */
  drop(generationIds: Iterable<string>): number {
    let dropped = 0;
    for (const id of generationIds) if (this.holds.delete(id)) dropped++;
    return dropped;
  }

  /** Forgets holds expired for longer than the grace; returns how many. */
  dropExpired(): number {
    const before = this.now() - expiredGraceMs;
    let dropped = 0;
    for (const [id, hold] of this.holds) {
      if (hold.expiresAt >= before) continue;
      this.holds.delete(id);
      dropped++;
    }
    return dropped;
  }

  /** Holds within their deadline, and past it but not yet forgotten (never settled), as `openHolds` reports them. */
  counts(): { active: number; expired: number } {
    const now = this.now();
    let active = 0;
    for (const hold of this.holds.values()) if (hold.expiresAt > now) active++;
    return { active, expired: this.holds.size - active };
  }
}

const stores = new WeakMap<object, MemoryHolds>();

/** The memory holds of an embedded database; undefined for Postgres, where replicas share the holds' rows. */
export function memoryHolds(db: Queryable): MemoryHolds | undefined {
  if (!("kind" in db) || db.kind !== "pglite") return undefined;
  let store = stores.get(db);
  if (!store) stores.set(db, (store = new MemoryHolds()));
  return store;
}

/** Runs a write that may bind or unbind keys (a key's limit, a credit limit, a budget) on `db`. */
export const changingBindings = <T>(db: Queryable, change: () => Promise<T>): Promise<T> =>
  memoryHolds(db)?.whileChanging(change) ?? change();
