import http from "node:http";
import type { Logger } from "@switchyard/runtime";

/**
 * The replicas of one service, in turn, skipping those whose `/readyz` fails: a draining replica fails it
 * before it stops accepting (DRAIN_DELAY_MS), so it gets no new requests while it finishes its own.
 */
export function replicaPool(name: string, urls: string[], logger: Logger, everyMs = 500) {
  const ready = urls.map(() => true);
  let next = 0;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
  const check = (index: number) =>
    new Promise<boolean>((resolve) => {
      const req = http.get(new URL("/readyz", urls[index]), { agent, timeout: 2000 }, (res) => {
        res.resume();
        resolve(res.statusCode === 200);
      });
      req.on("timeout", () => req.destroy());
      req.on("error", () => resolve(false));
    }).then((ok) => {
      if (ok !== ready[index]) logger.info({ service: name, replica: urls[index], ready: ok }, ok ? "replica ready" : "replica not ready; skipped");
      ready[index] = ok;
    });
  const timer = urls.length > 1 ? setInterval(() => urls.forEach((_, i) => void check(i)), everyMs) : undefined;
  timer?.unref();
  return {
    /**
     * The next ready replica other than `except` (the one a request just failed on); when none is, the next
     * one anyway (its answer is the most telling). With one URL, that URL.
     */
    pick(except?: string): string {
      for (let tried = 0; tried < urls.length; tried += 1) {
        const index = next++ % urls.length;
        if (ready[index] && urls[index] !== except) return urls[index]!;
      }
      const fallback = urls[next++ % urls.length]!;
      return fallback === except && urls.length > 1 ? urls[next++ % urls.length]! : fallback;
    },
    /** A replica that refused a connection is skipped until its readiness check passes again. */
    failed(url: string) {
      const index = urls.indexOf(url);
      if (index >= 0 && urls.length > 1) ready[index] = false;
    },
  };
}
