import { AsyncResource } from "node:async_hooks";
import type { HoldRequest } from "@switchyard/contracts";
import type { Queryable } from "@switchyard/runtime";

/** Writes the hold; asking again for the same generation (its next attempt) replaces its amount and lease. */
export const replaceHold = `
  ON CONFLICT (generation_id) DO UPDATE SET amount = excluded.amount, guardrail_ids = excluded.guardrail_ids, is_byok = excluded.is_byok,
    expires_at = excluded.expires_at, owner = excluded.owner, lease_until = excluded.lease_until`;

export const insertHold = `
  INSERT INTO identity.holds (generation_id, key_hash, guardrail_ids, amount, is_byok, expires_at, owner, lease_until, organization_id)
  SELECT $1, $2, $3::text[], $4::numeric, $5, now() + make_interval(secs => $6::double precision / 1000), $7,
    now() + make_interval(secs => $8::double precision / 1000), (SELECT organization_id FROM identity.api_keys WHERE hash = $2)`;

/**
 * A key that may still be used, as SQL on `identity.api_keys`: not disabled, not expired. A key deleted,
 * disabled or expired a moment ago may still be in a router's cache until its event arrives; its holds are
 * left to the full check, which refuses them (`keyStanding`).
 */
export const usableKey = "NOT disabled AND (expires_at IS NULL OR expires_at > now())";

/** Without an owner nothing renews a lease: the hold lives until it expires (a NULL interval gives a NULL lease). */
const leaseMs = (request: HoldRequest) => (request.owner === undefined ? null : (request.lease_ms ?? null));

export const holdParams = (request: HoldRequest, guardrailIds: string[]) => [
  request.generation_id,
  request.key_hash,
  guardrailIds,
  request.amount_usd,
  request.is_byok,
  request.ttl_ms,
  request.owner ?? null,
  leaseMs(request),
];

/**
 * Whether a limit applies to a request, as SQL: the key's limit (`key`, a row of `identity.api_keys`; BYOK
 * spend only when the key says so), a guardrail budget binding the key's `hash` (likewise), or the credit
 * limit of its `organization` (a row of `identity.organizations`; never BYOK spend), for a request whose BYOK
 * flag is `byok`. Rows not found are NULL and bind nothing. Every path that decides whether a request is
 * unbound asks this: `holdOne`, `holdMany` and the memory holds' `readBinding`.
 */
export const boundSql = (row: { key: string; hash: string; organization: string; byok: string }) => `(
  (${row.key}.spend_limit IS NOT NULL AND (NOT ${row.byok} OR ${row.key}.include_byok_in_limit))
  OR EXISTS (SELECT 1 FROM identity.guardrail_budget_keys bk JOIN identity.guardrail_budgets b USING (guardrail_id)
             WHERE bk.key_hash = ${row.hash} AND (NOT ${row.byok} OR b.include_byok))
  OR (${row.organization}.credit_limit IS NOT NULL AND NOT ${row.byok}))`;

/**
 * One request's hold when no limit applies: a key without a limit that no budget binds, in an organization
 * without a credit limit. One statement writes it unless one applies, under share locks on the key's and the
 * organization's rows, so a limit being set waits for it and then finds it among the holds.
 */
const holdOne = async (db: Queryable, request: HoldRequest): Promise<boolean> =>
  (
    await db.query(
      `WITH key AS (
         SELECT spend_limit, include_byok_in_limit, organization_id FROM identity.api_keys WHERE hash = $2 AND ${usableKey} FOR SHARE
       ), credits AS (
         SELECT credit_limit FROM identity.organizations WHERE id = (SELECT organization_id FROM key) FOR KEY SHARE
       )
       ${insertHold}
       WHERE EXISTS (SELECT 1 FROM key) AND NOT EXISTS (
         SELECT 1 FROM (SELECT 1) AS one LEFT JOIN key k ON true LEFT JOIN credits c ON true
         WHERE ${boundSql({ key: "k", hash: "$2", organization: "c", byok: "$5" })})
       ${replaceHold}
       RETURNING 1`,
      holdParams(request, []),
    )
  ).length > 0;

/**
 * The same for several requests in one statement, each row decided on its own as `holdOne` decides it.
 * Returns the generations whose hold it wrote; a request of a key it does not find, or that may no longer be
 * used, is left to the caller's full check, as are those a limit, a budget or credits apply to.
 */
async function holdMany(db: Queryable, requests: readonly HoldRequest[]): Promise<Set<string>> {
  const rows = requests.map((request) => ({
    generation_id: request.generation_id,
    key_hash: request.key_hash,
    amount: request.amount_usd,
    is_byok: request.is_byok,
    ttl_ms: request.ttl_ms,
    owner: request.owner ?? null,
    lease_ms: leaseMs(request),
  }));
  const written = await db.query<{ generation_id: string }>(
    `WITH request AS (
       SELECT * FROM jsonb_to_recordset($1::jsonb)
         AS r(generation_id text, key_hash text, amount numeric, is_byok boolean, ttl_ms double precision, owner text, lease_ms double precision)
     ), key AS (
       SELECT hash, spend_limit, include_byok_in_limit, organization_id FROM identity.api_keys
       WHERE hash IN (SELECT key_hash FROM request) AND ${usableKey} FOR SHARE
     ), credits AS (
       SELECT id, credit_limit FROM identity.organizations WHERE id IN (SELECT organization_id FROM key) FOR KEY SHARE
     )
     INSERT INTO identity.holds (generation_id, key_hash, guardrail_ids, amount, is_byok, expires_at, owner, lease_until, organization_id)
     SELECT r.generation_id, r.key_hash, '{}'::text[], r.amount, r.is_byok, now() + make_interval(secs => r.ttl_ms / 1000), r.owner,
       now() + make_interval(secs => r.lease_ms / 1000), k.organization_id
     FROM request r JOIN key k ON k.hash = r.key_hash LEFT JOIN credits c ON c.id = k.organization_id
     WHERE NOT ${boundSql({ key: "k", hash: "r.key_hash", organization: "c", byok: "r.is_byok" })}
     ${replaceHold}
     RETURNING generation_id`,
    [JSON.stringify(rows)],
  );
  return new Set(written.map((row) => row.generation_id));
}

interface Waiting {
  request: HoldRequest;
  resolve: (written: boolean) => void;
  reject: (error: unknown) => void;
}

/** The most requests one statement writes. */
const maxBatch = 64;

/**
 * The statements run outside the async context of the request that starts them: a batch serves many
 * requests, and must not join one's open transaction (embedded Postgres runs a statement begun inside
 * one as part of it).
 */
const detached = new AsyncResource("switchyard.holds");

/**
 * Writes unbound holds as they come, in one statement per batch (a group commit): while one batch is being
 * written, the requests that arrive wait and go together in the next. A lone request waits for nothing and
 * takes `holdOne`'s statement, which costs about a fifth less than the batch's with one row (on PGlite,
 * where statements run one at a time, every hold is a lone one). On a busy gateway a statement's fixed cost (a round trip, a commit) is most
 * of a hold's, so batches of a few cost a fraction each. A batch that fails is written again request by
 * request, all at once, so each request gets its own outcome.
 */
function batcher(db: Queryable): (request: HoldRequest) => Promise<boolean> {
  const queue: Waiting[] = [];
  let writing = false;

  /** The next batch: up to `maxBatch` waiting requests in order, each generation once (a repeat waits for the next). */
  const take = (): Waiting[] => {
    const batch: Waiting[] = [];
    const ids = new Set<string>();
    for (let i = 0; i < queue.length && batch.length < maxBatch; ) {
      const waiting = queue[i]!;
      if (ids.has(waiting.request.generation_id)) {
        i++;
        continue;
      }
      ids.add(waiting.request.generation_id);
      batch.push(waiting);
      queue.splice(i, 1);
    }
    return batch;
  };

  const one = (waiting: Waiting) => holdOne(db, waiting.request).then(waiting.resolve, waiting.reject);

  async function write(batch: Waiting[]): Promise<void> {
    if (batch.length === 1) return one(batch[0]!);
    let written: Set<string>;
    try {
      written = await holdMany(db, batch.map((waiting) => waiting.request));
    } catch {
      // At once, as separate requests' statements would have been: a database that is down fails each soon.
      await Promise.all(batch.map(one));
      return;
    }
    for (const waiting of batch) waiting.resolve(written.has(waiting.request.generation_id));
  }

  async function drain(): Promise<void> {
    writing = true;
    try {
      while (queue.length > 0) await write(take());
    } finally {
      writing = false;
    }
  }

  return (request) =>
    new Promise<boolean>((resolve, reject) => {
      queue.push({ request, resolve, reject });
      if (!writing) void detached.runInAsyncScope(drain);
    });
}

const batchers = new WeakMap<Queryable, (request: HoldRequest) => Promise<boolean>>();

/**
 * Writes the hold of a request no limit, budget or credit limit applies to, and says whether it did; when
 * one applies, nothing is written and the caller checks the request against it in a transaction.
 */
export function holdIfUnbound(db: Queryable, request: HoldRequest): Promise<boolean> {
  let hold = batchers.get(db);
  if (!hold) batchers.set(db, (hold = batcher(db)));
  return hold(request);
}
