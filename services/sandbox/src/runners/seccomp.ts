import { cloneNr, deniedCalls, firstUnreviewedNr, type SeccompArch } from "./seccomp-syscalls.js";

/**
 * The sandbox's seccomp filter as a classic BPF program (an array of `struct sock_filter`), the form
 * bubblewrap's `--seccomp FD` loads. We emit it ourselves rather than link libseccomp: the program is a
 * few dozen instructions, and a native addon or a runtime download would be a larger thing to trust.
 *
 * The program, run by the kernel on every system call with `struct seccomp_data` as its input:
 *   1. a call from another architecture's ABI (i386 on x86_64, arm32 on aarch64), whose numbers mean
 *      other calls, kills the process;
 *   2. numbers past the reviewed list (and x86_64's x32 ABI) get ENOSYS;
 *   3. each denied call gets its errno;
 *   4. clone with any namespace flag gets EPERM;
 *   5. everything else is allowed.
 */

/** `struct seccomp_data`: int nr; u32 arch; u64 instruction_pointer; u64 args[6]. */
const dataNr = 0;
const dataArch = 4;
/** The low 32 bits of args[0] on a little-endian machine, where every namespace flag lives. */
const dataArg0Low = 16;

// BPF opcodes (linux/bpf_common.h): class | size | mode, or class | op | source.
const ldAbsWord = 0x00 | 0x00 | 0x20; // BPF_LD | BPF_W | BPF_ABS
const jeq = 0x05 | 0x10 | 0x00; // BPF_JMP | BPF_JEQ | BPF_K
const jge = 0x05 | 0x30 | 0x00; // BPF_JMP | BPF_JGE | BPF_K
const jset = 0x05 | 0x40 | 0x00; // BPF_JMP | BPF_JSET | BPF_K
const ret = 0x06 | 0x00; // BPF_RET | BPF_K

// Filter results (linux/seccomp.h).
const retKillProcess = 0x8000_0000;
const retErrno = 0x0005_0000;
const retAllow = 0x7fff_0000;
const errnos = { EPERM: 1, ENOSYS: 38 } as const;

/** AUDIT_ARCH_* (linux/audit.h): the machine type, 64-bit and little-endian flags. */
const auditArch: Record<SeccompArch, number> = { x64: 0xc000_003e, arm64: 0xc000_00b7 };

/** CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET (linux/sched.h). */
export const cloneNamespaceFlags = 0x0002_0000 | 0x0200_0000 | 0x0400_0000 | 0x0800_0000 | 0x1000_0000 | 0x2000_0000 | 0x4000_0000;

export interface SockFilter {
  code: number;
  jt: number;
  jf: number;
  k: number;
}

const op = (code: number, k: number, jt = 0, jf = 0): SockFilter => ({ code, jt, jf, k });

/** The filter's instructions for one architecture. */
export function seccompProgram(arch: SeccompArch): SockFilter[] {
  const program: SockFilter[] = [
    op(ldAbsWord, dataArch),
    op(jeq, auditArch[arch], 1, 0),
    op(ret, retKillProcess),
    op(ldAbsWord, dataNr),
    op(jge, firstUnreviewedNr, 0, 1),
    op(ret, retErrno | errnos.ENOSYS),
  ];
  for (const denied of deniedCalls) {
    const nr = denied.nr[arch];
    if (nr === undefined) continue;
    // Not this call: skip its return. Each test jumps over one instruction, so no offset outgrows a byte.
    program.push(op(jeq, nr, 0, 1), op(ret, retErrno | errnos[denied.errno]));
  }
  // Last, since it loads the argument over the call number: clone with no namespace flag falls through.
  program.push(
    op(jeq, cloneNr[arch], 0, 3),
    op(ldAbsWord, dataArg0Low),
    op(jset, cloneNamespaceFlags, 0, 1),
    op(ret, retErrno | errnos.EPERM),
    op(ret, retAllow),
  );
  return program;
}

/** Node's name for the machine (`process.arch`) as the filter's, or why there is no filter for it. */
export function seccompArch(nodeArch: string, endianness: "BE" | "LE"): SeccompArch | { why: string } {
  if (endianness !== "LE") return { why: `the machine is big-endian, and the filter reads clone's flags as the low half of a little-endian word` };
  if (nodeArch === "x64" || nodeArch === "arm64") return nodeArch;
  return { why: `the sandbox has a seccomp filter for x86_64 and aarch64 only, and this machine is ${nodeArch}` };
}

/** The program as bytes in the machine's order: `struct sock_filter { u16 code; u8 jt; u8 jf; u32 k; }`. */
export function seccompFilter(arch: SeccompArch): Buffer {
  const program = seccompProgram(arch);
  const bytes = Buffer.alloc(program.length * 8);
  program.forEach((instruction, index) => {
    bytes.writeUInt16LE(instruction.code, index * 8);
    bytes.writeUInt8(instruction.jt, index * 8 + 2);
    bytes.writeUInt8(instruction.jf, index * 8 + 3);
    bytes.writeUInt32LE(instruction.k, index * 8 + 4);
  });
  return bytes;
}
