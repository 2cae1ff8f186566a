import { firstAccepting as tryInOrder, type Attempt, type AttemptContext, type AttemptSignal, type Candidate, type UpstreamTarget } from "@switchyard/upstream";
import { anthropic } from "../providers/anthropic.js";
import { google } from "../providers/google.js";
import { openAiCompatible } from "../providers/openai-compatible.js";
import type { ChatProvider } from "../providers/types.js";

/** Chat wire formats by the catalog's adapter name. */
const providers: Record<string, ChatProvider> = { openai: openAiCompatible, "openai-compatible": openAiCompatible, anthropic, google };

export const firstAccepting = <T>(
  candidates: Candidate[],
  context: AttemptContext,
  attempts: Attempt[],
  call: (provider: ChatProvider, target: UpstreamTarget, candidate: Candidate, attempt: AttemptSignal) => Promise<T>,
) => tryInOrder(providers, candidates, context, attempts, call);
