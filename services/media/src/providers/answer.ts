import { UpstreamError, type UpstreamResponse } from "@switchyard/upstream";

/** Reads the whole answer; a caller's abort stays an abort, a connection dropped mid-body may be retried elsewhere. */
export async function readAnswer(provider: string, res: UpstreamResponse, signal: AbortSignal): Promise<unknown> {
  let text: string;
  try {
    text = await res.body.text();
  } catch (error) {
    if (signal.aborted) throw error;
    throw new UpstreamError(`${provider} dropped the connection mid-answer: ${(error as Error).message}`, 502, true);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
