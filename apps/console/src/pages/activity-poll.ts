import type { Call } from "../api.js";
import type { GenerationSummary } from "./activity-table.js";

export const PAGE_SIZE = 50;
/** Pages one look at the newest generations reads at most; past them, the list starts again from the newest. */
const LOOK_PAGES = 4;

export interface Page {
  data: GenerationSummary[];
  next_cursor: string | null;
}

export interface Newer {
  /** What was read that the list does not have yet, newest first. */
  added: GenerationSummary[];
  /**
   * Set when the pages read never reached a generation the list has: more arrived than one look reads, so the
   * list is these rows, continued from `cursor` by "Load more", rather than them above a gap.
   */
  restart: { rows: GenerationSummary[]; cursor: string | null } | null;
}

/**
 * The generations recorded since the list was last brought up to date: pages from the newest on, until one
 * holds a generation the list has (its whole page is kept, so a late record below the top is found too).
 */
export async function newerGenerations(call: Call, query: Record<string, string | undefined>, known: Set<string>, signal: AbortSignal): Promise<Newer> {
  const read: GenerationSummary[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < LOOK_PAGES; page++) {
    const answer: Page = await call<Page>("/generations", { query: { ...query, limit: PAGE_SIZE, cursor }, signal });
    read.push(...answer.data);
    cursor = answer.next_cursor;
    if (cursor === null || answer.data.some((r) => known.has(r.id))) return { added: read.filter((r) => !known.has(r.id)), restart: null };
  }
  return { added: read.filter((r) => !known.has(r.id)), restart: { rows: read, cursor } };
}
