import type { Migration, Queryable } from "@switchyard/runtime";
import type { Histogram } from "./histogram.js";

/**
 * One row per endpoint, time bucket and replica: each replica writes only its own rows, with absolute
 * figures, so a write is idempotent and replicas never contend; readers add the rows up.
 */
export function endpointStatsMigrations(schema: string): Migration[] {
  return [
    {
      id: "000_endpoint_stats",
      sql: `
CREATE TABLE ${schema}.endpoint_stats (
  provider text NOT NULL,
  model text NOT NULL,
  bucket_start timestamptz NOT NULL,
  replica text NOT NULL,
  succeeded integer NOT NULL,
  failed integer NOT NULL,
  first_output jsonb NOT NULL,
  throughput jsonb NOT NULL,
  PRIMARY KEY (provider, model, bucket_start, replica)
);
CREATE INDEX endpoint_stats_bucket_start ON ${schema}.endpoint_stats (bucket_start);`,
    },
  ];
}

/** What one replica measured of one endpoint in one bucket. */
export interface BucketRow {
  provider: string;
  model: string;
  /** Epoch milliseconds of the bucket's start. */
  at: number;
  succeeded: number;
  failed: number;
  /** Time to the first output, in milliseconds. */
  first_output: Histogram;
  /** Output tokens per second. */
  throughput: Histogram;
}

export async function writeBuckets(db: Queryable, schema: string, replica: string, rows: readonly BucketRow[]): Promise<void> {
  if (!rows.length) return;
  const records = rows.map((r) => ({ ...r, bucket_start: new Date(r.at).toISOString() }));
  await db.query(
    `INSERT INTO ${schema}.endpoint_stats (provider, model, bucket_start, replica, succeeded, failed, first_output, throughput)
     SELECT r.provider, r.model, r.bucket_start, $2, r.succeeded, r.failed, r.first_output, r.throughput
       FROM jsonb_to_recordset($1::jsonb) AS r(provider text, model text, bucket_start timestamptz, succeeded int, failed int, first_output jsonb, throughput jsonb)
     ON CONFLICT (provider, model, bucket_start, replica) DO UPDATE
       SET succeeded = excluded.succeeded, failed = excluded.failed, first_output = excluded.first_output, throughput = excluded.throughput`,
    [JSON.stringify(records), replica],
  );
}

/** Every replica's rows of buckets that start at or after `since`. */
export async function readBuckets(db: Queryable, schema: string, since: number): Promise<BucketRow[]> {
  return db.query<BucketRow>(
    `SELECT provider, model, (extract(epoch FROM bucket_start) * 1000)::float8 AS at, succeeded, failed, first_output, throughput
       FROM ${schema}.endpoint_stats WHERE bucket_start >= $1`,
    [new Date(since).toISOString()],
  );
}

/** Attempts per endpoint, all replicas together, in buckets that start at or after `since` and before `before`. */
export async function readAttemptTotals(db: Queryable, schema: string, since: number, before: number): Promise<Array<{ provider: string; model: string; succeeded: number; failed: number }>> {
  return db.query(
    `SELECT provider, model, sum(succeeded)::int AS succeeded, sum(failed)::int AS failed
       FROM ${schema}.endpoint_stats WHERE bucket_start >= $1 AND bucket_start < $2 GROUP BY provider, model`,
    [new Date(since).toISOString(), new Date(before).toISOString()],
  );
}

export async function pruneBuckets(db: Queryable, schema: string, before: number): Promise<void> {
  await db.query(`DELETE FROM ${schema}.endpoint_stats WHERE bucket_start < $1`, [new Date(before).toISOString()]);
}
