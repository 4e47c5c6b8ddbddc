#!/usr/bin/python3 -B
"""Runs bwrap (its arguments are this script's) on a host that refuses prlimit on another
process, as a container's seccomp profile or a security module may: a seccomp filter, inherited by
bwrap and the Python server, answers EPERM to prlimit64 with a pid other than 0 (the caller itself)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "src", "python"))
import sandbox_os as s  # noqa: E402

SYS_PRLIMIT64 = 302
program = b"".join([
    s._ins(s.LD_W_ABS, 0, 0, 4),  # arch
    s._ins(s.JEQ_K, 1, 0, s.AUDIT_ARCH_X86_64),
    s._ins(s.RET_K, 0, 0, s.RET_ALLOW),
    s._ins(s.LD_W_ABS, 0, 0, 0),  # nr
    s._ins(s.JEQ_K, 0, 3, SYS_PRLIMIT64),
    s._ins(s.LD_W_ABS, 0, 0, 16),  # args[0]: the pid, low 32 bits
    s._ins(s.JEQ_K, 1, 0, 0),
    s._ins(s.RET_K, 0, 0, 0x00050000 | s.EPERM),
    s._ins(s.RET_K, 0, 0, s.RET_ALLOW),
])
s.no_new_privs()
s.Seccomp(program).load()
os.execv("/usr/bin/bwrap", ["bwrap"] + sys.argv[1:])
