import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

/** Clock ticks per second of /proc's CPU times (`getconf CLK_TCK`). */
export const clockTicks = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;

const read = (path: string) => {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined; // the process is gone
  }
};

/** CPU time (user + system) of one process in ms, from /proc/<pid>/stat; undefined when it is gone. */
export function cpuMsOf(pid: number): number | undefined {
  const stat = read(`/proc/${pid}/stat`);
  if (!stat) return undefined;
  // The command name (field 2) may hold spaces and parentheses; the fields after its last `)` start at field 3.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return ((utime + stime) * 1000) / clockTicks;
}

/** Resident memory of one process in bytes (`memoryOf`); 0 when it is gone. */
export const rssOf = (pid: number): number => memoryOf([pid]).rss;

/** Every process whose /proc/<pid>/comm is one of the names (e.g. the Postgres server's processes). */
export function pidsByComm(names: readonly string[]): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const comm = read(`/proc/${entry}/comm`)?.trim();
    if (comm && names.includes(comm)) pids.push(Number(entry));
  }
  return pids;
}

/** CPU ms per pid at one moment. */
export type CpuSnapshot = Map<number, number>;

export function cpuSnapshot(pids: readonly number[]): CpuSnapshot {
  const snapshot: CpuSnapshot = new Map();
  for (const pid of pids) {
    const ms = cpuMsOf(pid);
    if (ms !== undefined) snapshot.set(pid, ms);
  }
  return snapshot;
}

/**
 * CPU ms spent between two snapshots. A process present only in the later one started in between and
 * counts whole; one present only in the earlier one ended in between and its last part is lost.
 */
export function cpuSpent(before: CpuSnapshot, after: CpuSnapshot): number {
  let total = 0;
  for (const [pid, ms] of after) total += ms - (before.get(pid) ?? 0);
  return total;
}

/**
 * Waits until a set of processes has gone quiet: at most one 10 ms tick of CPU between them in 200 ms, or
 * 3 s at most. What a gateway does after its last answer (batched writes, events, their consumers, the
 * database's share) is its own work, and left running it would compete with the next target's slot.
 * Returns how long it waited.
 */
export async function settle(pids: () => readonly number[]): Promise<number> {
  const windowMs = 200;
  const quietMs = 10;
  const maxMs = 3000;
  const started = performance.now();
  let before = cpuSnapshot(pids());
  while (performance.now() - started < maxMs) {
    await new Promise((resolve) => setTimeout(resolve, windowMs));
    const after = cpuSnapshot(pids());
    if (cpuSpent(before, after) <= quietMs) break;
    before = after;
  }
  return performance.now() - started;
}

/**
 * A process's resident memory in bytes, from /proc/<pid>/status, in two parts: its own (`RssAnon` and
 * `RssShmem`: the heap, stacks, WebAssembly memory) and the pages of files it maps (`RssFile`: the node binary
 * and its libraries, which every Node process of the machine maps from the same files); zeros when it is gone.
 */
function residentOf(pid: number): { own: number; file: number } {
  const status = read(`/proc/${pid}/status`) ?? "";
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? 0) * 1024;
  return { own: kb("RssAnon") + kb("RssShmem"), file: kb("RssFile") };
}

/**
 * A set of processes' resident memory: their RSS summed, and what they take together, each one's own memory
 * and the pages of the files they map once, as the largest of their file pages. They all map the same node
 * binary, whose pages the kernel keeps once; its pages in the topology's eight processes, read from
 * /proc/<pid>/pagemap, came to 46 MB against 44 MB in the process that had most of them, and 348 MB summed.
 * For a single process the two are its RSS.
 */
export function memoryOf(pids: readonly number[]): { rss: number; together: number } {
  let own = 0;
  let files = 0;
  let file = 0;
  for (const pid of pids) {
    const resident = residentOf(pid);
    own += resident.own;
    files += resident.file;
    file = Math.max(file, resident.file);
  }
  return { rss: own + files, together: own + file };
}

/** Samples a set of processes' `memoryOf` every `intervalMs` until stopped, keeping the largest of each figure. */
export function rssSampler(pids: () => readonly number[], intervalMs = 50) {
  const peak = { rss: 0, together: 0 };
  const sample = () => {
    const { rss, together } = memoryOf(pids());
    peak.rss = Math.max(peak.rss, rss);
    peak.together = Math.max(peak.together, together);
  };
  sample();
  const timer = setInterval(sample, intervalMs);
  return {
    /** Stops sampling; returns the peaks in bytes. */
    stop(): { rss: number; together: number } {
      clearInterval(timer);
      sample();
      return peak;
    },
  };
}

/**
 * Where a TCP port is listened on, from /proc/net/tcp and tcp6: the local addresses of listening sockets
 * (`127.0.0.1`, `0.0.0.0`, `::`, ...). Used to make sure what the benchmark starts stays on the loopback.
 */
export function listeningAddresses(port: number): string[] {
  const addresses: string[] = [];
  for (const [file, v6] of [["/proc/net/tcp", false], ["/proc/net/tcp6", true]] as const) {
    for (const line of (read(file) ?? "").split("\n").slice(1)) {
      const [, local, , state] = line.trim().split(/\s+/);
      if (state !== "0A" || !local) continue; // 0A: LISTEN
      const [hex, portHex] = local.split(":");
      if (!hex || Number.parseInt(portHex ?? "", 16) !== port) continue;
      addresses.push(v6 ? ipv6(hex) : ipv4(hex));
    }
  }
  return addresses;
}

// /proc/net/tcp writes addresses as 32-bit words in host (little-endian) order.
const words = (hex: string) => hex.match(/.{8}/g)?.map((word) => word.match(/../g)!.reverse().join("")) ?? [];
const ipv4 = (hex: string) => (words(hex)[0]?.match(/../g) ?? []).map((byte) => Number.parseInt(byte, 16)).join(".");
function ipv6(hex: string): string {
  const bytes = words(hex).join("");
  if (bytes === "0".repeat(32)) return "::";
  if (bytes.startsWith("00000000000000000000ffff")) return `::ffff:${ipv4(bytes.slice(24).match(/../g)!.reverse().join(""))}`;
  if (bytes === `${"0".repeat(31)}1`) return "::1";
  return bytes.match(/.{4}/g)!.join(":");
}
