import { serverToolCallType, type ServerToolCallDetail } from "@switchyard/contracts";
import type { ToolRun } from "./run.js";

/** One `reasoning_details` entry as a provider sent it: a thinking block, its signature, a summary... */
export type Detail = Record<string, unknown> & { type: string };

const isDetail = (value: unknown): value is Detail =>
  typeof value === "object" && value !== null && !Array.isArray(value) && typeof (value as { type?: unknown }).type === "string";

/** The parts of an entry that stream in pieces; anything else (type, id, format) is the same in every piece. */
const joined = new Set(["text", "summary", "data", "signature"]);

/**
 * Adds streamed pieces to a turn's reasoning. A thinking block arrives as many deltas of one index (its
 * text, then its signature), and the next turn must send it back whole, or a thinking model refuses it.
 * Pieces without an index are entries of their own.
 */
export function mergeDetails(into: Detail[], pieces: unknown): void {
  if (!Array.isArray(pieces)) return;
  for (const piece of pieces) {
    if (!isDetail(piece)) continue;
    const same = Number.isInteger(piece.index) ? into.find((d) => d.index === piece.index && d.type === piece.type) : undefined;
    if (!same) {
      into.push({ ...piece });
      continue;
    }
    for (const [key, value] of Object.entries(piece)) {
      if (value === null || value === undefined) continue;
      const before = same[key];
      same[key] = joined.has(key) && typeof value === "string" && typeof before === "string" ? before + value : (before ?? value);
    }
  }
}

/** A buffered turn's reasoning, as the provider gave it. */
export const wholeDetails = (details: unknown): Detail[] => (Array.isArray(details) ? details.filter(isDetail) : []);

/**
 * The client gets the reasoning of every turn, and the server tool calls, in one list. Each turn numbers
 * its entries from 0, so they are moved past the earlier turns' ones: a client joins deltas of one index,
 * and would otherwise join two turns' thinking into one block with the wrong signature.
 */
export class DetailNumbering {
  private base = 0;
  private next = 0;

  /** The turn's entries (deltas or whole) as the client sees them; entries without an index keep none. */
  renumber(details: readonly Detail[]): Detail[] {
    return details.map((d) => {
      if (!Number.isInteger(d.index)) return d;
      const index = this.base + (d.index as number);
      this.next = Math.max(this.next, index + 1);
      return { ...d, index };
    });
  }

  /** The server tool calls of a round, after the reasoning of the turn that asked for them. */
  serverCalls(runs: readonly ToolRun[]): ServerToolCallDetail[] {
    const details = runs.map((run) => serverToolCallDetail(run, this.next++));
    this.endTurn();
    return details;
  }

  endTurn(): void {
    this.base = this.next;
  }
}

/**
 * A call the gateway ran, as `@openrouter/sdk` reads it: the tool by its canonical type, the arguments the
 * model gave and the result it read (JSON; a sandboxed tool's carries the container it ran in).
 */
export function serverToolCallDetail(run: ToolRun, index: number): ServerToolCallDetail {
  return { type: serverToolCallType, tool_name: `openrouter:${run.kind}`, tool_call_id: run.id, arguments: run.arguments, result: run.output, index };
}
