import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Request } from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HttpError } from "./errors.js";
import { readMultipart } from "./multipart.js";

let server: Server;
let url: string;

/** A server answering what `readMultipart` made of each request: the file's name and size, or the error's status and message. */
beforeAll(async () => {
  server = createServer((req: IncomingMessage, res) => {
    readMultipart(req as Request, 1024).then(
      (upload) => res.end(JSON.stringify({ filename: upload.file?.filename, size: upload.file?.bytes.length })),
      (error: unknown) => {
        res.statusCode = error instanceof HttpError ? error.status : 500;
        res.end(JSON.stringify({ message: (error as Error).message }));
      },
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const send = async (body: string | FormData, headers: Record<string, string> = {}) => {
  const res = await fetch(url, { method: "POST", body, headers });
  return { status: res.status, body: (await res.json()) as { filename?: string; size?: number; message?: string } };
};

describe("readMultipart", () => {
  it("refuses a file part that never ends with a 400, and goes on serving", async () => {
    const cut = '--XB\r\nContent-Disposition: form-data; name="file"; filename="t.txt"\r\n\r\nhello world';
    const refused = await send(cut, { "content-type": "multipart/form-data; boundary=XB" });
    expect(refused).toEqual({ status: 400, body: { message: "Invalid multipart body: Unexpected end of form" } });
    const form = new FormData();
    form.set("file", new Blob(["hello"]), "t.txt");
    expect(await send(form)).toEqual({ status: 200, body: { filename: "t.txt", size: 5 } });
  });

  it("reads a file name as the UTF-8 a browser and fetch send it in", async () => {
    const form = new FormData();
    form.set("file", new Blob(["hi"]), "résumé–€.txt");
    expect((await send(form)).body.filename).toBe("résumé–€.txt");
  });
});
