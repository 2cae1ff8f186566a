import { Writable } from "node:stream";

const levels: Record<number, string> = { 10: "TRACE", 20: "DEBUG", 30: "INFO", 40: "WARN", 50: "ERROR", 60: "FATAL" };
/** Fields every line has, shown in its head rather than as key=value. */
const headFields = new Set(["level", "time", "service", "name", "msg", "err"]);

const shown = (value: unknown): string => {
  if (typeof value === "string") return /^[\w./:@-]*$/.test(value) && value !== "" ? value : JSON.stringify(value);
  return JSON.stringify(value) ?? String(value);
};

/** One JSON log line as a person reads it: `12:00:01.234 INFO  [identity] message key=value …`, then an error's stack. */
export function prettyLine(json: string): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json;
  }
  const time = typeof entry.time === "string" ? entry.time.slice(11, 23) : "";
  const level = (levels[Number(entry.level)] ?? String(entry.level)).padEnd(5);
  const service = entry.service ?? entry.name;
  const rest = Object.entries(entry)
    .filter(([key]) => !headFields.has(key))
    .map(([key, value]) => `${key}=${shown(value)}`);
  const err = entry.err as { stack?: string; message?: string } | undefined;
  const stack = err ? `\n    ${(err.stack ?? err.message ?? "").split("\n").join("\n    ")}` : "";
  return `${[time, level, service ? `[${String(service)}]` : "", String(entry.msg ?? ""), ...rest].filter(Boolean).join(" ")}${stack}\n`;
}

/** A destination for pino that writes each JSON line to `out` as `prettyLine` shows it. */
export function prettyStream(out: NodeJS.WritableStream): Writable {
  return new Writable({
    write(chunk: Buffer, _encoding, done) {
      const text = chunk.toString("utf8");
      out.write(
        text
          .split("\n")
          .filter(Boolean)
          .map((line) => prettyLine(line))
          .join(""),
      );
      done();
    },
  });
}
