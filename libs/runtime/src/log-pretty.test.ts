import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger } from "./log.js";
import { prettyLine } from "./log-pretty.js";

describe("readable log lines", () => {
  it("show time, level, service and message, then the other fields as key=value", () => {
    const line = prettyLine(JSON.stringify({ level: 40, time: "2026-11-27T04:50:01.234Z", service: "identity", name: "identity", reqId: "r-1", status: 503, note: "two words", msg: "key lookup slow" }));
    expect(line).toBe('04:50:01.234 WARN  [identity] key lookup slow reqId=r-1 status=503 note="two words"\n');
  });

  it("print an error's stack under its line", () => {
    const line = prettyLine(JSON.stringify({ level: 50, time: "2026-11-27T04:50:01.234Z", service: "router", err: { message: "boom", stack: "Error: boom\n    at x (y.js:1:1)" }, msg: "failed" }));
    expect(line).toBe("04:50:01.234 ERROR [router] failed\n    Error: boom\n        at x (y.js:1:1)\n");
  });

  it("are what a logger asked for `pretty` writes, with secrets still redacted; `json` stays JSON", async () => {
    const read = (format: "pretty" | "json") => {
      const out = new PassThrough();
      let text = "";
      out.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
      createLogger({ service: "catalog", format, destination: out }).info({ provider: { api_key: "sk-secret-value" }, models: 3 }, "catalog loaded");
      return new Promise<string>((resolve) => setImmediate(() => resolve(text)));
    };
    expect(await read("pretty")).toMatch(/^\d\d:\d\d:\d\d\.\d{3} INFO {2}\[catalog\] catalog loaded provider=\{"api_key":"\[redacted\]"\} models=3\n$/);
    expect(JSON.parse(await read("json"))).toMatchObject({ service: "catalog", msg: "catalog loaded", provider: { api_key: "[redacted]" }, models: 3 });
  });
});
