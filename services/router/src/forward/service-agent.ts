import http from "node:http";
import type { Socket } from "node:net";

/**
 * After an origin said `Connection: close` (a draining replica says it on every answer), none of its
 * keep-alive sockets is kept for this long: the replica is about to close them, and a request sent on one
 * as it does would fail. Behind one Kubernetes Service URL this briefly costs new connections to the
 * healthy pods too, which is cheap next to a failed request.
 */
const closingWindowMs = 10_000;
/** Below the services' keep-alive timeout (65 s): an idle socket is dropped here before the service drops it. */
const idleSocketMs = 30_000;

export interface ServiceAgent {
  agent: http.Agent;
  /** Remembers the origin (`host:port`) a request's socket leads to. */
  track(req: http.ClientRequest, origin: string): void;
  /** The origin is going away (it asked to close, or a reused socket to it failed): its idle sockets go now. */
  closing(origin: string): void;
}

/** A keep-alive pool to one service's replicas that stops reusing the sockets of a replica that is leaving. */
export function serviceAgent(): ServiceAgent {
  const originOf = new WeakMap<Socket, string>();
  const closingUntil = new Map<string, number>();
  const isClosing = (origin: string | undefined) => origin !== undefined && (closingUntil.get(origin) ?? 0) > Date.now();

  class Pool extends http.Agent {
    override keepSocketAlive(socket: Socket): boolean {
      if (isClosing(originOf.get(socket))) return false;
      // Node's own only sets keep-alive options (typed void, it always keeps the socket).
      super.keepSocketAlive(socket);
      // The agent destroys a free socket whose timeout fires.
      socket.setTimeout(idleSocketMs);
      return true;
    }
  }
  const agent = new Pool({ keepAlive: true, maxSockets: 512, keepAliveMsecs: 10_000 });

  return {
    agent,
    track(req, origin) {
      req.once("socket", (socket: Socket) => {
        originOf.set(socket, origin);
        // The idle timeout must not cut a long, quiet stream once the socket carries a request again.
        socket.setTimeout(0);
      });
    },
    closing(origin) {
      closingUntil.set(origin, Date.now() + closingWindowMs);
      for (const sockets of Object.values(agent.freeSockets)) {
        for (const socket of sockets ?? []) if (originOf.get(socket) === origin) socket.destroy();
      }
    },
  };
}
