/** A seeded generator of numbers in [0, 1), so that a failing fuzz input can be made again. */
export function seededRandom(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return state / 2_147_483_648;
  };
}

/** Whether a length reader's answer on hostile bytes is one a charge can take: none, or a finite length. */
export const readableSeconds = (seconds: number | undefined): boolean => seconds === undefined || (Number.isFinite(seconds) && seconds >= 0);
