/**
 * System calls a sandboxed command may not make, with their numbers on each architecture we build a
 * filter for. x86_64 has its own table (asm/unistd_64.h); aarch64 uses the generic one
 * (asm-generic/unistd.h). A call an architecture lacks has no number there. seccomp.test.ts checks these
 * numbers against the kernel headers where the machine has them.
 *
 * The classes follow what Docker's default profile and Flatpak refuse: calls that reach the kernel's
 * namespace, mount, tracing, key, BPF, module and machine-wide state, none of which a build or a script
 * needs, and each of which has been the door of a container escape.
 */
export type SeccompArch = "x64" | "arm64";

export interface DeniedCall {
  name: string;
  /** Number per architecture; absent where the architecture has no such call. */
  nr: Partial<Record<SeccompArch, number>>;
  /** EPERM, or ENOSYS where libc or the program falls back to an older call when this one is missing. */
  errno: "EPERM" | "ENOSYS";
}

const call = (name: string, x64: number | undefined, arm64: number | undefined, errno: DeniedCall["errno"] = "EPERM"): DeniedCall => ({
  name,
  nr: { ...(x64 === undefined ? {} : { x64 }), ...(arm64 === undefined ? {} : { arm64 }) },
  errno,
});

export const deniedCalls: readonly DeniedCall[] = [
  // Namespaces: a new user namespace hands its creator every capability inside it, the start of most
  // kernel exploits from a container. clone without namespace flags stays allowed (see seccomp.ts).
  call("unshare", 272, 97),
  call("setns", 308, 268),
  // clone3 passes its flags in memory, where a classic BPF filter cannot look: ENOSYS makes glibc fall
  // back to clone, whose flags the filter does check.
  call("clone3", 435, 435, "ENOSYS"),
  // Mounts, old and new API. Flatpak answers the new API with ENOSYS so programs fall back to mount(2).
  call("mount", 165, 40),
  call("umount2", 166, 39),
  call("pivot_root", 155, 41),
  call("chroot", 161, 51),
  call("open_tree", 428, 428, "ENOSYS"),
  call("move_mount", 429, 429, "ENOSYS"),
  call("fsopen", 430, 430, "ENOSYS"),
  call("fsconfig", 431, 431, "ENOSYS"),
  call("fsmount", 432, 432, "ENOSYS"),
  call("fspick", 433, 433, "ENOSYS"),
  call("mount_setattr", 442, 442, "ENOSYS"),
  // Tracing and reading other processes.
  call("ptrace", 101, 117),
  call("process_vm_readv", 310, 270),
  call("process_vm_writev", 311, 271),
  call("kcmp", 312, 272),
  call("pidfd_getfd", 438, 438),
  // The kernel keyring is not namespaced.
  call("add_key", 248, 217),
  call("request_key", 249, 218),
  call("keyctl", 250, 219),
  // BPF programs, performance counters, io_uring (whose operations bypass this filter) and userfaultfd
  // (a tool for winning kernel races).
  call("bpf", 321, 280),
  call("perf_event_open", 298, 241),
  call("userfaultfd", 323, 282),
  call("io_uring_setup", 425, 425),
  call("io_uring_enter", 426, 426),
  call("io_uring_register", 427, 427),
  // Kernel modules and a new kernel.
  call("init_module", 175, 105),
  call("finit_module", 313, 273),
  call("delete_module", 176, 106),
  call("kexec_load", 246, 104),
  call("kexec_file_load", 320, 294),
  // Machine-wide state: the kernel log, accounting, quotas, swap, clocks, reboot, file handles.
  call("syslog", 103, 116),
  call("acct", 163, 89),
  call("quotactl", 179, 60),
  call("quotactl_fd", 443, 443),
  call("swapon", 167, 224),
  call("swapoff", 168, 225),
  call("reboot", 169, 142),
  call("settimeofday", 164, 170),
  call("clock_settime", 227, 112),
  call("clock_adjtime", 305, 266),
  call("adjtimex", 159, 171),
  call("open_by_handle_at", 304, 265),
  call("fanotify_init", 300, 262),
  call("lookup_dcookie", 212, 18),
  call("vhangup", 153, 58),
  // x86 only: 16-bit segments and port I/O, and obsolete calls.
  call("modify_ldt", 154, undefined),
  call("iopl", 172, undefined),
  call("ioperm", 173, undefined),
  call("uselib", 134, undefined),
  call("_sysctl", 156, undefined),
];

/** clone(2), whose first argument (the flags) the filter inspects on both architectures. */
export const cloneNr: Record<SeccompArch, number> = { x64: 56, arm64: 220 };

/**
 * Calls numbered from here on are newer than this list (Linux 6.12's last is 462, mseal): they get
 * ENOSYS until someone reviews them, so a kernel upgrade cannot open a door by itself (Linux 6.15's
 * open_tree_attr, 467, is a mount call). On x86_64 this also refuses the x32 ABI, whose numbers carry
 * bit 30.
 */
export const firstUnreviewedNr = 463;
