import { speechMediaTypes, type SpeechFormat } from "@switchyard/contracts";
import { metrics } from "@switchyard/runtime";
import type { Response } from "express";
import type { SpeechPart, SpeechProvider, SpeechUsage } from "../providers/types.js";
import { recordGeneration } from "../record.js";
import { chargeFor, runRecord, type MediaRun, type Served } from "../run.js";
import { speechUsage, type SpeechText } from "./usage.js";

/** Writes one chunk, waiting while the client's buffer is full; false once the client has gone away. */
function write(res: Response, bytes: Uint8Array): Promise<boolean> {
  if (res.destroyed || res.writableEnded) return Promise.resolve(false);
  if (res.write(bytes)) return Promise.resolve(true);
  return new Promise((resolve) => {
    const settle = (ok: boolean) => {
      res.off("drain", drained);
      res.off("close", closed);
      resolve(ok);
    };
    const drained = () => settle(true);
    const closed = () => settle(false);
    res.once("drain", drained);
    res.once("close", closed);
  });
}

/**
 * Streams the audio to the client as the provider sends it, never holding more than a chunk, then charges.
 * Binary audio has no way to carry an error in-band, so a failure after the first byte cuts the response
 * (its chunked encoding never ends, which clients report as an error instead of a short file); the
 * generation is recorded as an error and charged for what was produced. A client that goes away takes the
 * provider call with it (the request's signal aborts it) and is recorded as cancelled.
 */
export async function sendSpeech(
  run: MediaRun<SpeechProvider>,
  served: Served,
  parts: AsyncIterable<SpeechPart>,
  text: SpeechText,
  sent: { format: SpeechFormat; speed: number },
  res: Response,
): Promise<void> {
  res.writeHead(200, { "content-type": speechMediaTypes[sent.format], "cache-control": "no-store" });
  let bytes = 0;
  let firstAudio: number | undefined;
  let reported: SpeechUsage | undefined;
  let failure: string | undefined;
  let gone = false;
  try {
    for await (const part of parts) {
      if (part.type === "usage") {
        reported = part.usage;
        continue;
      }
      bytes += part.bytes.length;
      firstAudio ??= performance.now();
      if (!(await write(res, part.bytes))) {
        gone = true;
        break;
      }
    }
  } catch (error) {
    if (run.timedOut() || !run.signal.aborted) {
      failure = run.timedOut() ? "the request's deadline passed mid-stream" : (error as Error).message;
      run.deps.logger.warn({ err: failure, generationId: run.generationId }, "speech stream failed mid-way");
    } else gone = true;
  }
  const status = failure !== undefined ? "error" : gone ? "cancelled" : "completed";
  if (status === "error") res.destroy();
  const { candidate } = served;
  const used = speechUsage(text, candidate, { ...sent, bytes }, reported);
  metrics.streamDuration.observe({ service: "media", status }, (performance.now() - run.started) / 1000);
  const firstOutputMs = firstAudio === undefined ? undefined : Math.round(firstAudio - run.started);
  await recordGeneration(run.deps, { ...runRecord(run, candidate, true), firstOutputMs, status, usage: used.usage, usageEstimated: used.estimated, charge: chargeFor(run, served, used.usage) });
  if (status === "completed") res.end();
}
