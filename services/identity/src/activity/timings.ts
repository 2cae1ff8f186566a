/**
 * Generation times are counted in buckets that grow by a quarter: bucket 0 holds times under 10 ms, bucket
 * `i` those from 10·1.25^(i-1) to 10·1.25^i ms, the last everything above (about three hours). The median
 * of counted times is then known within 12%, from a few rows per day whatever the traffic.
 */
const base = 10;
const growth = 1.25;
export const lastBucket = 63;

export function timingBucket(ms: number): number {
  if (!(ms >= base)) return 0;
  return Math.min(lastBucket, Math.floor(Math.log(ms / base) / Math.log(growth)) + 1);
}

/** The time a bucket stands for: the geometric middle of its bounds (5 ms for the first), within 12% of any time in it. */
export const bucketMiddle = (bucket: number): number => (bucket === 0 ? base / 2 : Math.round(base * growth ** (bucket - 0.5)));
