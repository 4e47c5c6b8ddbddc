"""OS containment for one forked child: rlimits, Landlock, seccomp.

This is the boundary (together with bwrap and the non-root uid); everything in
policy.py is only policy that gives clearer errors. ctypes is needed here
because the stdlib has no binding for landlock(2)/seccomp(2); the child's audit
hook (policy.py) forbids every ctypes event once user code runs.
"""
import ctypes
import os
import platform
import resource
import struct

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
_libc.prctl.restype = ctypes.c_int

MACHINE = platform.machine()
# Syscall numbers are per architecture; only x86_64 is supported for now and
# other architectures report seccomp as unavailable (docs/python.md).
X86_64 = MACHINE == "x86_64"

PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2

SYS_landlock_create_ruleset = 444
SYS_landlock_add_rule = 445
SYS_landlock_restrict_self = 446
LANDLOCK_CREATE_RULESET_VERSION = 1
LANDLOCK_RULE_PATH_BENEATH = 1

FS_EXECUTE = 1 << 0
FS_WRITE_FILE = 1 << 1
FS_READ_FILE = 1 << 2
FS_READ_DIR = 1 << 3
FS_REMOVE_DIR = 1 << 4
FS_REMOVE_FILE = 1 << 5
FS_MAKE_CHAR = 1 << 6
FS_MAKE_DIR = 1 << 7
FS_MAKE_REG = 1 << 8
FS_MAKE_SOCK = 1 << 9
FS_MAKE_FIFO = 1 << 10
FS_MAKE_BLOCK = 1 << 11
FS_MAKE_SYM = 1 << 12
FS_REFER = 1 << 13  # ABI 2
FS_TRUNCATE = 1 << 14  # ABI 3
FS_IOCTL_DEV = 1 << 15  # ABI 5
NET_BIND_TCP = 1 << 0  # ABI 4
NET_CONNECT_TCP = 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6
SCOPE_SIGNAL = 1 << 1


def landlock_abi():
    if not X86_64:
        return 0
    r = _libc.syscall(SYS_landlock_create_ruleset, None, ctypes.c_size_t(0),
                      ctypes.c_uint32(LANDLOCK_CREATE_RULESET_VERSION))
    return r if r > 0 else 0


def _fs_handled(abi):
    mask = (1 << 13) - 1
    if abi >= 2:
        mask |= FS_REFER
    if abi >= 3:
        mask |= FS_TRUNCATE
    if abi >= 5:
        mask |= FS_IOCTL_DEV
    return mask


class Landlock:
    """Prepared once in the server: O_PATH fds of the read-only trees stay
    open so each child only issues a handful of syscalls."""

    def __init__(self, abi, ro_dirs, rw_files):
        self.abi = abi
        self.fs = _fs_handled(abi)
        self.ro_dir_access = FS_EXECUTE | FS_READ_FILE | FS_READ_DIR
        self.rw_dir_access = self.fs & ~(FS_EXECUTE | FS_MAKE_CHAR | FS_MAKE_BLOCK | FS_MAKE_SOCK
                                         | FS_MAKE_FIFO | FS_MAKE_SYM | FS_REFER | FS_IOCTL_DEV)
        self.file_access = FS_READ_FILE | FS_WRITE_FILE | (FS_TRUNCATE if abi >= 3 else 0)
        self.fds = []
        for path in ro_dirs:
            if os.path.isdir(path):
                self.fds.append((os.open(path, os.O_PATH | os.O_CLOEXEC), self.ro_dir_access))
        for path in rw_files:
            if os.path.exists(path):
                self.fds.append((os.open(path, os.O_PATH | os.O_CLOEXEC), self.file_access))

    def keep_fds(self):
        return [fd for fd, _ in self.fds]

    def _add_path(self, ruleset, fd, access):
        attr = struct.pack("=Qi", access, fd)
        if _libc.syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, attr, 0) != 0:
            raise OSError(ctypes.get_errno(), "landlock_add_rule(path)")

    def restrict(self, scratch):
        """Applies one Landlock layer: read-only trees, read-write scratch, no
        TCP bind or connect at all (network calls reach the egress proxy over
        a unix socket), and on ABI >= 6 no signals/abstract sockets to
        processes outside the layer."""
        size = 8
        net = 0
        scoped = 0
        if self.abi >= 4:
            net = NET_BIND_TCP | NET_CONNECT_TCP
            size = 16
        if self.abi >= 6:
            scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL
            size = 24
        attr = struct.pack("=QQQ", self.fs, net, scoped)[:size]
        ruleset = _libc.syscall(SYS_landlock_create_ruleset, attr, ctypes.c_size_t(size), 0)
        if ruleset < 0:
            raise OSError(ctypes.get_errno(), "landlock_create_ruleset")
        try:
            for fd, access in self.fds:
                self._add_path(ruleset, fd, access)
            sfd = os.open(scratch, os.O_PATH | os.O_CLOEXEC)
            try:
                self._add_path(ruleset, sfd, self.rw_dir_access)
            finally:
                os.close(sfd)
            if _libc.syscall(SYS_landlock_restrict_self, ruleset, 0) != 0:
                raise OSError(ctypes.get_errno(), "landlock_restrict_self")
        finally:
            os.close(ruleset)


def no_new_privs():
    if _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(NO_NEW_PRIVS)")


# --- seccomp -------------------------------------------------------------
AUDIT_ARCH_X86_64 = 0xC000003E
RET_ALLOW = 0x7FFF0000
RET_KILL_PROCESS = 0x80000000
EPERM = 1
ENOSYS = 38
CLONE_THREAD = 0x00010000
AF_UNIX = 1
AF_INET = 2
AF_INET6 = 10

LD_W_ABS = 0x20
JEQ_K = 0x15
JGE_K = 0x35
JSET_K = 0x45
RET_K = 0x06

# Denied for the whole server (it never needs them).
SERVER_DENY = {
    59: "execve", 322: "execveat", 101: "ptrace", 165: "mount", 166: "umount2", 155: "pivot_root",
    161: "chroot", 272: "unshare", 308: "setns", 321: "bpf", 425: "io_uring_setup",
    426: "io_uring_enter", 427: "io_uring_register", 246: "kexec_load", 320: "kexec_file_load",
    175: "init_module", 313: "finit_module", 176: "delete_module", 169: "reboot", 167: "swapon",
    168: "swapoff", 310: "process_vm_readv", 311: "process_vm_writev", 298: "perf_event_open",
    250: "keyctl", 248: "add_key", 249: "request_key", 323: "userfaultfd", 135: "personality",
    163: "acct", 164: "settimeofday", 227: "clock_settime", 159: "adjtimex", 103: "syslog",
    179: "quotactl", 304: "open_by_handle_at", 303: "name_to_handle_at", 172: "iopl",
    173: "ioperm", 153: "vhangup", 300: "fanotify_init", 438: "pidfd_getfd", 428: "open_tree",
    429: "move_mount", 430: "fsopen", 431: "fsconfig", 432: "fsmount", 433: "fspick",
    442: "mount_setattr", 58: "vfork", 312: "kcmp",
}
# Additionally denied in each child: no processes, no signals to others, no
# raising rlimits, sockets only when the call has network access (AF_UNIX to
# reach the egress proxy; AF_INET/AF_INET6 objects whose connect is routed
# through it, in a namespace with no interface but an unused loopback).
CHILD_DENY = {
    57: "fork", 62: "kill", 200: "tkill", 234: "tgkill", 129: "rt_sigqueueinfo",
    297: "rt_tgsigqueueinfo", 424: "pidfd_send_signal", 434: "pidfd_open", 160: "setrlimit",
    302: "prlimit64", 53: "socketpair", 43: "accept", 288: "accept4", 50: "listen", 49: "bind",
}
SYS_CLONE = 56
SYS_CLONE3 = 435
SYS_SOCKET = 41
SYS_CONNECT = 42


def _ins(code, jt, jf, k):
    return struct.pack("=HBBI", code, jt, jf, k)


def _build(deny, clone_threads_only, socket_families_only, no_sockets):
    prog = [
        _ins(LD_W_ABS, 0, 0, 4),  # arch
        _ins(JEQ_K, 1, 0, AUDIT_ARCH_X86_64),
        _ins(RET_K, 0, 0, RET_KILL_PROCESS),
        _ins(LD_W_ABS, 0, 0, 0),  # nr
        _ins(JGE_K, 0, 1, 0x40000000),  # x32 ABI
        _ins(RET_K, 0, 0, 0x00050000 | EPERM),
    ]
    for nr in sorted(deny):
        prog += [_ins(JEQ_K, 0, 1, nr), _ins(RET_K, 0, 0, 0x00050000 | EPERM)]
    # clone3 passes flags in memory BPF cannot read: ENOSYS makes glibc fall
    # back to clone(2), whose flags we can check.
    prog += [_ins(JEQ_K, 0, 1, SYS_CLONE3), _ins(RET_K, 0, 0, 0x00050000 | ENOSYS)]
    if clone_threads_only:
        prog += [
            _ins(JEQ_K, 0, 4, SYS_CLONE),
            _ins(LD_W_ABS, 0, 0, 16),  # args[0] low 32 bits (little endian)
            _ins(JSET_K, 1, 0, CLONE_THREAD),
            _ins(RET_K, 0, 0, 0x00050000 | EPERM),
            _ins(RET_K, 0, 0, RET_ALLOW),
        ]
    if no_sockets:
        for nr in (SYS_SOCKET, SYS_CONNECT):
            prog += [_ins(JEQ_K, 0, 1, nr), _ins(RET_K, 0, 0, 0x00050000 | EPERM)]
    elif socket_families_only:
        prog += [
            _ins(JEQ_K, 0, 6, SYS_SOCKET),
            _ins(LD_W_ABS, 0, 0, 16),
            _ins(JEQ_K, 3, 0, AF_UNIX),
            _ins(JEQ_K, 2, 0, AF_INET),
            _ins(JEQ_K, 1, 0, AF_INET6),
            _ins(RET_K, 0, 0, 0x00050000 | EPERM),
            _ins(RET_K, 0, 0, RET_ALLOW),
        ]
    prog.append(_ins(RET_K, 0, 0, RET_ALLOW))
    return b"".join(prog)


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


class Seccomp:
    """A filter built once (in the server) and loaded with one prctl call."""

    def __init__(self, program):
        self._buf = ctypes.create_string_buffer(program, len(program))
        self._fprog = _SockFprog(len(program) // 8, ctypes.addressof(self._buf))
        self._ref = ctypes.byref(self._fprog)

    def load(self):
        if _libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, self._ref, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(SECCOMP)")


def server_filter():
    return Seccomp(_build(SERVER_DENY, False, False, False))


def child_filter(network):
    return Seccomp(_build(CHILD_DENY, True, network, not network))


def set_rlimits(file_bytes, open_files):
    """The limits every call shares. RLIMIT_NPROC=0 stops any new process or
    thread for a non-root uid."""
    resource.setrlimit(resource.RLIMIT_FSIZE, (file_bytes, file_bytes))
    resource.setrlimit(resource.RLIMIT_NOFILE, (open_files, open_files))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if os.getuid() != 0:
        resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))


def set_call_limits(pid, memory_bytes, cpu_seconds):
    """The limits that differ per call, set by the server on the child `pid`
    (soft and hard; soft CPU < hard CPU so the child first gets SIGXCPU, then
    SIGKILL). Lowering another process's limits needs only the same uid, no
    capability; the child's seccomp filter denies it setrlimit/prlimit."""
    resource.prlimit(pid, resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    resource.prlimit(pid, resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 1))


def probe_call_limits(pid):
    """Sets `pid`'s memory and CPU limits to what they are, as a call sets a child's: raises
    OSError on a host that refuses it (a security module on prlimit), which would refuse every call."""
    for limit in (resource.RLIMIT_AS, resource.RLIMIT_CPU):
        resource.prlimit(pid, limit, resource.prlimit(pid, limit))
