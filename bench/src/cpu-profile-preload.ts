import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector";
import { basename, dirname, join } from "node:path";
import { benchConfig } from "./config.js";

/**
 * Preload (`NODE_OPTIONS=--import=...`) for processes the benchmark starts without an IPC channel (the
 * topology's services, the Portkey gateway): SIGUSR2 starts a V8 CPU profile, the next SIGUSR2 stops it and
 * writes `<dir>/<label>-<pid>-<name>.cpuprofile`, where the label is what the benchmark wrote to `<dir>/label`.
 * So a profile covers the measured phases only, not startup. (`--cpu-prof` is not allowed in NODE_OPTIONS.)
 */
const dir = benchConfig.signalProfileDir;
const script = process.argv[1] ?? "node";
// services/<name>/dist/main.js is <name>; anything else is its file name.
const name = script.endsWith(join("dist", "main.js")) ? basename(dirname(dirname(script))) : basename(script).replace(/\.[cm]?js$/, "");
let session: Session | undefined;

function stop() {
  const running = session;
  if (!running || !dir) return;
  session = undefined;
  // The inspector answers a session of the same thread synchronously, so this also works in an `exit` handler.
  running.post("Profiler.stop", (error, result) => {
    if (!error) {
      let label = "profile";
      try {
        label = readFileSync(join(dir, "label"), "utf8").trim() || label;
      } catch {
        // no label written
      }
      const file = join(dir, `${label}-${process.pid}-${name}.cpuprofile`);
      writeFileSync(`${file}.part`, JSON.stringify(result.profile));
      renameSync(`${file}.part`, file);
    }
    running.disconnect();
  });
}

if (dir) {
  process.on("SIGUSR2", () => {
    if (session) return stop();
    session = new Session();
    session.connect();
    session.post("Profiler.enable");
    session.post("Profiler.start");
  });
  process.on("exit", stop);
}
