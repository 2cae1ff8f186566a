import { setFlagsFromString } from "node:v8";

/**
 * V8 flags every Switchyard server process starts with (`npm start`, the images' commands, the services that
 * `scripts/topology.mjs` starts), since V8 reads them only at start. `--max-semi-space-size=16` keeps the young
 * generation at most 2 × 16 MB, as Node 20 sizes it: Node 24, the images' runtime, lets it grow to about four
 * times that under a gateway's load, about 100 MB more resident memory per process at the same CPU per
 * request (figures in docs/architecture.md).
 */
export const serverNodeFlags: readonly string[] = ["--max-semi-space-size=16"];

/** How far past what its last full collection kept V8's heap may grow before the next one: as much again. */
const heapGrowthPercent = 100;

/**
 * Caps how far V8 lets its heap grow between full collections, for a process that serves for its whole
 * life beside everything else on one machine (standalone). V8 picks the factor itself, up to 4× what the
 * last full collection kept on a machine with memory to spare, and keeps what it took when load stops: a
 * standalone gateway that had just answered a few thousand requests of each API at concurrency 10 held a
 * heap of 265 MB of which about 90 MB was live. At 2× its peak RSS over the benchmark's plans was 325–345 MB
 * against 324–441 MB (475–485 against 503–535 MB on Node 24), at the same CPU per request within the
 * benchmark's noise. At 1.5× Node 20 held less still, but on Node 24 the embeddings plan cost half as much
 * CPU again: V8 13 also counts the buffers a request allocates towards its next full collection. A process
 * started with its own `--heap-growing-percent` keeps it. A process-wide V8 setting, read at every full
 * collection.
 */
export function limitHeapGrowth(): void {
  if (process.execArgv.some((arg) => /^--heap[-_]growing[-_]percent/.test(arg))) return;
  setFlagsFromString(`--heap-growing-percent=${heapGrowthPercent}`);
}
