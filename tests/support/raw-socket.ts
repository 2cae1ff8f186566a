import { connect, type Socket } from "node:net";

/** A plain TCP connection to a server, for requests no HTTP client would send: half-sent, chunked past a limit. */
export interface RawConnection {
  socket: Socket;
  /** Everything the server has sent so far. */
  received(): string;
  /** Resolves once the server has closed the connection; never rejects. */
  closed: Promise<void>;
  /** Waits until what was received satisfies `done`, or the connection closed, or `timeoutMs` passed. */
  until(done: (text: string) => boolean, timeoutMs: number): Promise<string>;
  /** Writes and waits until the bytes are handed to the kernel; false once the server closed the connection. */
  write(data: string | Buffer): Promise<boolean>;
}

export async function rawConnection(port: number): Promise<RawConnection> {
  const socket = connect(port, "127.0.0.1");
  await new Promise<void>((resolve, reject) => socket.once("connect", resolve).once("error", reject));
  let text = "";
  const listeners = new Set<() => void>();
  socket.on("data", (chunk: Buffer) => {
    text += chunk.toString("latin1");
    for (const listener of listeners) listener();
  });
  // The server may reset a connection it closes while the client still writes: that is a close here.
  socket.on("error", () => undefined);
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  void closed.then(() => {
    for (const listener of listeners) listener();
  });
  let isClosed = false;
  void closed.then(() => (isClosed = true));
  return {
    socket,
    received: () => text,
    closed,
    until(done, timeoutMs) {
      return new Promise((resolve) => {
        const check = () => {
          if (!done(text) && !isClosed) return;
          listeners.delete(check);
          clearTimeout(timer);
          resolve(text);
        };
        const timer = setTimeout(() => {
          listeners.delete(check);
          resolve(text);
        }, timeoutMs);
        listeners.add(check);
        check();
      });
    },
    write(data) {
      if (isClosed || socket.destroyed) return Promise.resolve(false);
      return new Promise((resolve) => socket.write(data, (error) => resolve(!error)));
    },
  };
}

/** The bytes of one chunk of a chunked body. */
export const chunk = (data: string) => `${Buffer.byteLength(data).toString(16)}\r\n${data}\r\n`;
