import { ApiError, type Call } from "../api.js";
import type { GenerationFacts } from "./playground-stream.js";

/** The record is written just after the answer ends: while it is not there yet, it is asked again this often… */
const RECORD_WAIT_MS = 500;
/** …up to this number of times in all. */
const RECORD_TRIES = 10;

/** The parts of `GET /generation`'s record the playground fills in. */
interface GenerationRecord {
  total_cost: number;
  tokens_prompt: number | null;
  tokens_completion: number | null;
}

/**
 * A stream that failed or was stopped part-way ends without usage, yet the gateway charges what was sent: the
 * generation's record says what. Facts that already have a cost (or no generation id) come back as they are.
 */
export async function withRecordedCost(call: Call, facts: GenerationFacts, signal: AbortSignal): Promise<GenerationFacts> {
  if (facts.cost !== null || !facts.id) return facts;
  for (let tries = 1; ; tries++) {
    try {
      const { data } = await call<{ data: GenerationRecord }>("/generation", { query: { id: facts.id }, signal });
      return {
        ...facts,
        cost: data.total_cost,
        promptTokens: facts.promptTokens ?? data.tokens_prompt,
        completionTokens: facts.completionTokens ?? data.tokens_completion,
      };
    } catch (e) {
      if (!(e instanceof ApiError && e.status === 404) || tries >= RECORD_TRIES) return facts;
      await new Promise((resolve) => setTimeout(resolve, RECORD_WAIT_MS));
    }
  }
}
