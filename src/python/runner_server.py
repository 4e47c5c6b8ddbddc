"""caseflow Python fork server.

Run as `/usr/bin/python3 -I -S -B runner_server.py` (inside bwrap, as an
unprivileged uid). Frames on stdin/stdout are a 4-byte big-endian length and
a UTF-8 JSON object. The first frame in is `init` (policy, network flag); the
server answers `ready` with the capabilities it found. Then every request
`{id, op: run|scan|ping, ...}` gets one response `{id, ...}`. A request frame
is a 4-byte length of its JSON header, the header, then the bytes of its file
inputs back to back (each file's size is in the header): no base64. Run and scan
each get a fresh child from the zygote (forked before any request was read),
which receives only its own request, so many requests can be in flight and none
can see another. While calls come, a child is forked and contained ahead of the
next call (a spare, `prearm` in init): the call then only narrows its limits
and hands it the request.
"""
import json
import os
import re
import select
import selectors
import shutil
import signal
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import egress  # noqa: E402
import hardening  # noqa: E402
import harness  # noqa: E402
import policy as policy_mod  # noqa: E402
import sandbox_os  # noqa: E402
import scan as scan_mod  # noqa: E402

MAX_CHILD_BYTES = 24 << 20
# Same limit as MAX_REQUEST_BYTES in runner-process.ts.
MAX_REQUEST_BYTES = 64 << 20
# Node writes the id first, so a request that does not parse can still be answered.
REQUEST_ID = re.compile(rb'\{"id":(\d+)[,}]')
STDLIB_DIR = os.path.dirname(json.__file__.rsplit("/json/", 1)[0] + "/")


def encode(obj):
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def write_frame(obj):
    write_body(encode(obj))


def write_body(data):
    buf = struct.pack(">I", len(data)) + data
    view = memoryview(buf)
    while view:
        n = os.write(1, view)
        view = view[n:]


def read_exact_blocking(n):
    chunks = []
    while n:
        b = os.read(0, n)
        if not b:
            raise EOFError
        chunks.append(b)
        n -= len(b)
    return b"".join(chunks)


def read_init():
    (size,) = struct.unpack(">I", read_exact_blocking(4))
    return json.loads(read_exact_blocking(size))


class Server:
    def __init__(self, init):
        self.network = bool(init.get("network"))
        self.require = bool(init.get("requireContainment", True))
        # Tests turn the audit hook off to prove the OS layers hold on their own.
        self.audit_hook = bool(init.get("auditHook", True))
        self.policy_data = init.get("policy") or {}
        self.policy = policy_mod.Policy(self.policy_data, self.network)
        # The egress proxy's unix socket: the network servers' only way out.
        self.egress_socket = init.get("egressSocket") if self.network else None
        self.errors = []
        self.scratch = Scratch(init.get("scratch") or {})
        prearm = init.get("prearm") or {}
        self.prearm = max(0, int(prearm.get("children") or 0))
        self.prearm_idle = max(0, int(prearm.get("idleMs") or 0)) / 1000.0
        # Children forked and armed but holding no call (idle), or let go and not yet exited, by pid.
        self.spares = {}
        self.last_request = float("-inf")
        self.crash_replaced = False
        self.preload()
        # Before the zygote forks: every child inherits the patched stdlib (hardening.py).
        self.formats = hardening.install(self.policy.blocked_attrs, self.policy.check_attr)
        self.abi = sandbox_os.landlock_abi()
        self.landlock = None
        self.seccomp_ok = False
        self.child_seccomp = None
        self.devnull = os.open("/dev/null", os.O_RDWR | os.O_CLOEXEC)
        self.baseline_vm = self.vm_size()
        if self.abi > 0:
            try:
                self.landlock = sandbox_os.Landlock(
                    self.abi,
                    ["/usr", "/etc", "/lib", "/lib64", "/bin"],
                    ["/dev/null", "/dev/urandom", "/dev/zero"],
                )
            except OSError as e:
                self.errors.append(f"landlock: {e}")
        try:
            sandbox_os.no_new_privs()
            if sandbox_os.X86_64:
                self.child_seccomp = sandbox_os.child_filter(self.network)
                sandbox_os.server_filter().load()
                self.seccomp_ok = True
            else:
                self.errors.append(f"seccomp: unsupported architecture {sandbox_os.MACHINE}")
        except OSError as e:
            self.errors.append(f"seccomp: {e}")
        # Forked before any request is read, so no child can find another call's bytes.
        self.zygote = Zygote.start(self)
        # Each call's limits are set on its child from here: a host that refuses that is known now, not at
        # every call. The zygote is a process of this server's as a child is.
        self.call_limits_ok = True
        try:
            sandbox_os.probe_call_limits(self.zygote.pid)
        except OSError as e:
            self.call_limits_ok = False
            self.errors.append(f"prlimit: {e}")
        self.sel = selectors.DefaultSelector()
        self.inbuf = bytearray()
        self.jobs = {}
        self.closing = False

    def preload(self):
        """Import the allowed modules once so children start warm. Network
        modules (which pull in socket/ssl) only in the network pool."""
        names = list(self.policy_data.get("allowedModules", []))
        if self.network:
            names += self.policy_data.get("networkModules", [])
        for name in names:
            try:
                __import__(name)
            except Exception as e:  # a module missing on this host only matters if used
                self.errors.append(f"preload {name}: {type(e).__name__}")

    @staticmethod
    def vm_size():
        try:
            with open("/proc/self/statm") as f:
                return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        except OSError:
            return 64 << 20

    def caps(self):
        return {
            "landlockAbi": self.abi if self.landlock else 0,
            "seccomp": self.seccomp_ok,
            "callLimits": self.call_limits_ok,
            "uid": os.getuid(),
            "arch": sandbox_os.MACHINE,
            "network": self.network,
            "python": sys.version.split()[0],
            "errors": self.errors,
        }

    # --- event loop -------------------------------------------------------
    def serve(self):
        os.set_blocking(0, False)
        self.sel.register(0, selectors.EVENT_READ, ("stdin", None))
        # Not blocking: a call may take an exit report out of turn (next_child).
        os.set_blocking(self.zygote.exits, False)
        self.sel.register(self.zygote.exits, selectors.EVENT_READ, ("exits", None))
        while not (self.closing and not self.jobs and not self.spares):
            timeout = None
            due = [j["deadline"] for j in self.jobs.values()]
            if self.idle_spares():
                due.append(self.last_request + self.prearm_idle)
            if due:
                timeout = max(0.0, min(due) - time.monotonic())
            for key, _ in self.sel.select(timeout):
                kind, job = key.data
                # One batch can hold a job's exit and its pipe: once finish() has
                # closed the pipe (whose fd number may already be reused), skip the rest.
                if job is not None and job.get("done"):
                    continue
                if kind == "stdin":
                    self.on_stdin()
                elif kind == "exits":
                    self.on_exits()
                else:
                    self.on_pipe(job)
            now = time.monotonic()
            for job in list(self.jobs.values()):
                if job["deadline"] <= now and not job["killed"]:
                    job["killed"] = True
                    job["deadline"] = now + 5
                    kill(job["pid"])
            if now - self.last_request >= self.prearm_idle:
                for child in self.idle_spares():
                    self.let_go(child)

    def on_stdin(self):
        try:
            data = os.read(0, 1 << 20)
        except BlockingIOError:
            return
        if not data:
            self.closing = True
            self.sel.unregister(0)
            for child in self.idle_spares():
                self.let_go(child)
            return
        self.inbuf += data
        while len(self.inbuf) >= 4:
            (size,) = struct.unpack(">I", self.inbuf[:4])
            if len(self.inbuf) < 4 + size:
                break
            frame = bytes(self.inbuf[4:4 + size])
            del self.inbuf[:4 + size]
            self.on_frame(frame)

    def on_frame(self, frame):
        """A frame that cannot be parsed fails its own call, never the server."""
        header = request_header(frame)
        if len(frame) > MAX_REQUEST_BYTES:
            problem = f"the request is over the limit of {MAX_REQUEST_BYTES} bytes"
        else:
            try:
                req = json.loads(header)
            except (ValueError, RecursionError) as e:
                problem = f"the request could not be parsed ({type(e).__name__})"
            else:
                if isinstance(req, dict):
                    self.on_request(req, frame)
                    return
                problem = "the request is not a JSON object"
        m = REQUEST_ID.match(header)
        if m:
            write_frame(fail(int(m.group(1)), "error", problem, 0))

    def on_request(self, req, frame):
        op = req.get("op")
        rid = req.get("id")
        if op == "ping":
            write_frame({"id": rid, "ok": True, "pong": True, "inFlight": len(self.jobs)})
            return
        if op not in ("run", "scan"):
            write_frame({"id": rid, "ok": False, "error": {"kind": "error", "message": f"unknown op {op!r}"}})
            return
        if op == "run" and req.get("network") and not self.network:
            write_frame({"id": rid, "ok": False, "error": {"kind": "sandbox", "message": "this runner has no network"}})
            return
        self.spawn(req, frame)

    def spawn(self, req, frame):
        self.last_request = time.monotonic()
        self.crash_replaced = False
        for _ in range(2):  # a spare found dead leaves the call to the next child, once
            child = self.next_child()
            if child is None:  # the pool sends at most one call per slot; a server that lost one says so
                write_frame(fail(req.get("id"), "sandbox", "no scratch space is free on this runner", 0))
                break
            if self.hand_over(child, req, frame):
                break
        else:
            write_frame(fail(req.get("id"), "sandbox", "no Python process could take the call", 0))
        self.refill()

    def next_child(self):
        """An armed spare, else a fresh child on a free slot; None when no slot is free."""
        while True:
            child = next(iter(self.idle_spares()), None) or self.fork_child()
            if child is not None or not self.spares:
                return child
            # A child let go holds its slot until it exits; it was SIGKILLed, so that is a moment.
            select.select([self.zygote.exits], [], [], 1.0)
            self.on_exits()

    def fork_child(self):
        """A child on a free slot: it contains itself on that slot's scratch, then waits for its call."""
        slot = self.scratch.take()
        if slot is None:
            return None
        pid, sock = self.zygote.fork(slot)
        child = {"pid": pid, "sock": sock, "slot": slot, "idle": True}
        self.spares[pid] = child
        return child

    def hand_over(self, child, req, frame):
        """The call's own limits on the child, then its request. False when the child cannot take
        it (it died unseen): it is let go without the call, which goes to another child. A host that
        refuses the limits (a security module on prlimit) fails the call saying so: no other child
        would fare better."""
        pid = child["pid"]
        timeout_ms = timeout_of(req)
        start = time.monotonic()
        try:
            sandbox_os.set_call_limits(pid, *self.call_limits(req, timeout_ms))
            write_all(child["sock"], struct.pack(">I", len(frame)) + frame)
        except (ProcessLookupError, BrokenPipeError, ConnectionResetError):
            self.let_go(child)
            return False
        except (OSError, ValueError) as err:
            self.let_go(child)
            write_frame(fail(req.get("id"), "sandbox", f"the call's limits could not be set: {err}", 0))
            return True
        del self.spares[pid]
        r = child["sock"]
        job = {"id": req.get("id"), "pid": pid, "pipe": r, "buf": bytearray(), "slot": child["slot"],
               "deadline": start + timeout_ms / 1000.0, "killed": False, "overflow": False,
               "timeoutMs": timeout_ms, "start": start, "op": req.get("op")}
        self.jobs[pid] = job
        os.set_blocking(r, False)
        self.sel.register(r, selectors.EVENT_READ, ("pipe", job))
        return True

    def call_limits(self, req, timeout_ms):
        """(address space bytes, CPU seconds) of one call."""
        mem_mb = min(max(int(req.get("memoryMb") or 256), 32), 8192)
        return self.baseline_vm + (mem_mb << 20), int(timeout_ms / 1000) + 1

    def idle_spares(self):
        return [c for c in self.spares.values() if c["idle"]]

    def refill(self):
        """Arms spares up to `prearm` on free slots, while calls come."""
        if self.closing or time.monotonic() - self.last_request >= self.prearm_idle:
            return
        while len(self.idle_spares()) < self.prearm and self.fork_child() is not None:
            pass

    def let_go(self, child):
        """A spare that will get no call is killed (it holds none, so nothing is lost); its exit
        report frees its slot."""
        child["idle"] = False
        if child["sock"] is not None:
            os.close(child["sock"])
            child["sock"] = None
        kill(child["pid"])

    def spare_exited(self, child):
        crashed = child["idle"]  # it died holding no call and not let go: killed from outside
        if child["sock"] is not None:
            os.close(child["sock"])
        del self.spares[child["pid"]]
        self.scratch.release(child["slot"])
        if crashed and not self.crash_replaced:  # replaced, once per call at most (no fork loop)
            self.crash_replaced = True
            self.refill()

    def on_exits(self):
        try:
            data = os.read(self.zygote.exits, 4096)
        except BlockingIOError:
            return
        if not data:
            raise RuntimeError("the zygote exited")
        for pid, status in struct.iter_unpack(">ii", data):
            job = self.jobs.get(pid)
            if job is not None:
                self.finish(job, status)
            elif pid in self.spares:
                self.spare_exited(self.spares[pid])

    def on_pipe(self, job):
        try:
            data = os.read(job["pipe"], 1 << 20)
        except BlockingIOError:
            return
        if not data:
            self.sel.unregister(job["pipe"])
            job["pipe_closed"] = True
            return
        if len(job["buf"]) + len(data) > MAX_CHILD_BYTES:
            job["overflow"] = True
            kill(job["pid"])
            return
        job["buf"] += data

    def finish(self, job, status):
        pid = job["pid"]
        if not job.get("pipe_closed"):
            self.sel.unregister(job["pipe"])
            os.set_blocking(job["pipe"], True)
            while not job["overflow"]:
                data = os.read(job["pipe"], 1 << 20)
                if not data:
                    break
                if len(job["buf"]) + len(data) > MAX_CHILD_BYTES:
                    job["overflow"] = True
                    break
                job["buf"] += data
        os.close(job["pipe"])
        del self.jobs[pid]
        job["done"] = True
        # The child is dead (its exit was reported), so nothing writes to the slot while it is emptied.
        self.scratch.release(job["slot"])
        res = self.response(job, status)
        try:
            body = encode(res)
        except (ValueError, RecursionError):  # e.g. lone surrogates or deep nesting from a hostile child
            body = encode(fail(job["id"], "output", "the code produced a result that cannot be returned",
                               res.get("childMs", 0)))
        write_body(body)
        # After the answer: the spare for the next call is forked off the critical path.
        self.refill()

    def response(self, job, status):
        rid = job["id"]
        ms = round((time.monotonic() - job["start"]) * 1000, 3)
        if job["overflow"]:
            return fail(rid, "output", "the code produced more than 24 MB of results", ms)
        if job["buf"]:
            try:
                res = json.loads(bytes(job["buf"]))
                if isinstance(res, dict):
                    res["id"] = rid
                    res["childMs"] = ms
                    return res
            except (ValueError, RecursionError):  # cut off by a kill, or hostile: judged by status below
                pass
        if job["killed"]:
            return fail(rid, "timeout", f"execution exceeded the time limit of {job['timeoutMs']} ms", ms)
        if os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
            if sig in (signal.SIGXCPU, signal.SIGKILL):
                return fail(rid, "limit", "CPU time limit exceeded", ms)
            if sig == signal.SIGXFSZ:
                return fail(rid, "limit", "file size limit exceeded", ms)
            return fail(rid, "error", f"the Python process crashed ({signal.Signals(sig).name})", ms)
        return fail(rid, "error", f"the Python process exited without a result (status {os.WEXITSTATUS(status)})", ms)


class Scratch:
    """One scratch directory per call slot, each (when sandboxed) its own size-limited tmpfs
    mounted by bwrap, so a call that fills its scratch takes no space from another call. A slot
    is emptied when its call ends, before the answer is sent, so the next call finds it empty."""

    def __init__(self, config):
        self.mb = int(config.get("mb") or 64)
        slots = max(1, int(config.get("slots") or 1))
        # Mount points when sandboxed; unsandboxed, plain directories bounded only by RLIMIT_FSIZE per file.
        self.dirs = [f"{config['prefix']}{k}" for k in range(slots)]
        for d in self.dirs:
            os.makedirs(d, 0o700, exist_ok=True)
            os.chmod(d, 0o700)
        self.free = list(range(slots))

    def take(self):
        return self.free.pop(0) if self.free else None

    def release(self, slot):
        """A slot that cannot be emptied is not used again (the pool replaces a server that runs out)."""
        try:
            empty_dir(self.dirs[slot])
        except OSError:
            return
        self.free.append(slot)
        self.free.sort()


def empty_dir(path):
    """Removes everything under `path`, also what its call made unreadable (chmod 0) for us."""
    os.chmod(path, 0o700)
    for top, dirs, _ in os.walk(path):
        for d in dirs:
            p = os.path.join(top, d)
            if not os.path.islink(p):
                os.chmod(p, 0o700)
    with os.scandir(path) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path)
            else:
                os.unlink(entry.path)


def timeout_of(req):
    return min(max(int(req.get("timeoutMs") or 10000), 50), 600000)


def kill(pid):
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def write_all(fd, data):
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def request_header(frame):
    """The JSON header of a request frame (empty when the frame is too short to hold one)."""
    if len(frame) < 4:
        return b""
    (size,) = struct.unpack(">I", frame[:4])
    return frame[4:4 + size]


def read_request(fd):
    """The child's own request, its file inputs as bytes: files: {url: {name, contentType, data}}."""
    (size,) = struct.unpack(">I", read_exact(fd, 4))
    frame = memoryview(read_exact(fd, size))
    header = request_header(frame)
    req = json.loads(bytes(header))
    offset = 4 + len(header)
    files = {}
    for entry in req.get("files") or []:
        n = int(entry.get("size", 0))
        if n < 0 or offset + n > len(frame):
            raise ValueError("a file input runs past the end of the request")
        files[entry.get("url")] = {"name": entry.get("name"), "contentType": entry.get("contentType"),
                                   "data": bytes(frame[offset:offset + n])}
        offset += n
    req["files"] = files
    return req


def read_exact(fd, n):
    chunks = []
    while n:
        b = os.read(fd, min(n, 1 << 20))
        if not b:
            raise EOFError
        chunks.append(b)
        n -= len(b)
    return b"".join(chunks)


class Zygote:
    """Forks every child and never reads a request: a child's memory, fds and
    environment hold only what the zygote had before serving, plus its own call.
    The server hands each child its request over the child's own socket."""

    def __init__(self, pid, ctl, exits):
        self.pid = pid
        self.ctl = ctl
        self.exits = exits

    @classmethod
    def start(cls, server):
        ctl, ctl_z = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        exits_r, exits_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            code = 70
            try:
                ctl.close()
                os.close(exits_r)
                for fd in (0, 1):
                    os.dup2(server.devnull, fd)
                cls.serve(server, ctl_z, exits_w)
                code = 0
            finally:
                os._exit(code)
        ctl_z.close()
        os.close(exits_w)
        return cls(pid, ctl, exits_r)

    def fork(self, slot):
        """(pid, fd of the socket to a fresh child that contains itself on scratch slot `slot`)."""
        self.ctl.send(struct.pack(">I", slot))
        msg, fds, _, _ = socket.recv_fds(self.ctl, 16, 1)
        if not fds:
            raise RuntimeError("the zygote did not fork")
        (pid,) = struct.unpack(">i", msg)
        return pid, fds[0]

    @staticmethod
    def serve(server, ctl, exits_w):
        sel = selectors.DefaultSelector()
        sel.register(ctl, selectors.EVENT_READ, None)
        while True:
            for key, _ in sel.select():
                if key.data is None:
                    msg = ctl.recv(16)
                    if not msg:
                        return
                    (slot,) = struct.unpack(">I", msg)
                    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
                    pid = os.fork()
                    if pid == 0:
                        code = 70
                        try:
                            ours.close()
                            Child(server, theirs.detach(), slot).run()
                            code = 0
                        finally:
                            os._exit(code)
                    theirs.close()
                    socket.send_fds(ctl, [struct.pack(">i", pid)], [ours.fileno()])
                    ours.close()
                    pidfd = os.pidfd_open(pid)
                    sel.register(pidfd, selectors.EVENT_READ, pid)
                else:
                    sel.unregister(key.fd)
                    os.close(key.fd)
                    _, status = os.waitpid(key.data, 0)
                    write_all(exits_w, struct.pack(">ii", key.data, status))


def fail(rid, kind, message, ms):
    return {"id": rid, "ok": False, "error": {"kind": kind, "message": message},
            "logs": [], "stdout": "", "stderr": "", "childMs": ms}


class Child:
    """Code that runs in the forked child: contain first, then wait for the call and run it."""

    def __init__(self, server, sock, slot):
        self.s = server
        self.w = sock
        self.slot = slot
        self.req = {}

    def close_fds(self):
        s = self.s
        keep = sorted({self.w, s.devnull} | set(s.landlock.keep_fds() if s.landlock else []))
        low = 3
        for fd in keep:
            if fd > low:
                os.closerange(low, fd)
            low = fd + 1
        os.closerange(low, 1 << 20)
        for fd in (0, 1, 2):
            os.dup2(s.devnull, fd)

    def arm(self, scratch):
        """Everything that is the same for every call, before any call arrives. The call's own
        memory and CPU limits are set by the server (set_call_limits) before it sends the request,
        maybe while this runs: so they are not touched here, and seccomp then stops this process
        from changing any limit."""
        s = self.s
        self.close_fds()
        sandbox_os.set_rlimits(32 << 20, 64)
        if s.landlock:
            s.landlock.restrict(scratch)
        elif s.require:
            raise OSError("Landlock is not available")
        if s.child_seccomp:
            s.child_seccomp.load()
        elif s.require:
            raise OSError("seccomp is not available")
        os.chdir(scratch)

    def run(self):
        try:
            self.arm(self.s.scratch.dirs[self.slot])
            problem = None
        except OSError as e:  # said in answer to the call, which then does not run
            problem = e
        try:
            self.req = read_request(self.w)
        except EOFError:  # let go without a call
            return
        except (OSError, ValueError, RecursionError, MemoryError) as e:  # read under the call's own limits
            self.send(fail(None, "error", f"the request could not be read ({type(e).__name__})", 0))
            return
        if problem is not None:
            self.send(fail(None, "sandbox", f"could not contain the Python process: {problem}", 0))
            return
        if self.req.get("op") == "scan":
            self.scan()
        else:
            self.execute()

    def send(self, obj):
        data = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), default=str).encode("utf-8")
        view = memoryview(data)
        while view:
            n = os.write(self.w, view)
            view = view[n:]

    def scan(self):
        p = policy_mod.Policy(self.s.policy_data, False)
        violations = scan_mod.scan(self.req.get("source", ""), p,
                                   self.s.policy_data.get("blockedNames", []),
                                   int(self.s.policy_data.get("maxConstantExponent", 100000)))
        self.send({"ok": True, "violations": violations})

    def execute(self):
        network = bool(self.req.get("network"))
        guard = policy_mod.Guard(policy_mod.Policy(self.s.policy_data, network), self.s.formats)
        out, err, logs = harness.CappedWriter(), harness.CappedWriter(), []
        sys.stdout, sys.stderr = out, err
        if network and self.s.egress_socket:
            egress.install(self.s.egress_socket, str(self.req.get("egressToken") or ""))
            trace = self.req.get("traceContext")
            if isinstance(trace, dict) and trace:
                egress.carry_trace_context(trace)
        if self.s.audit_hook:
            policy_mod.install_audit_hook(network, harness.PRIVILEGED, STDLIB_DIR)
        try:
            outputs = harness.execute(self.req, guard, out, err, logs, self.s.scratch.mb)
            text = harness.serialize_outputs(outputs)
            res = {"ok": True, "outputs": "__OUTPUTS__"}
        except harness.UserError as e:
            text = None
            error = {"kind": e.kind, "message": e.message}
            if e.tb:
                error["traceback"] = e.tb
            res = {"ok": False, "error": error}
        except MemoryError:
            text = None
            res = {"ok": False, "error": {"kind": "limit", "message": "memory limit exceeded"}}
        sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
        res["logs"] = logs
        res["stdout"] = out.value()
        res["stderr"] = err.value()
        res["truncated"] = out.truncated or err.truncated
        body = json.dumps(res, ensure_ascii=False, separators=(",", ":"), default=str)
        if text is not None:
            body = body.replace('"__OUTPUTS__"', text, 1)
        self.send_raw(body.encode("utf-8"))

    def send_raw(self, data):
        view = memoryview(data)
        while view:
            n = os.write(self.w, view)
            view = view[n:]


def main():
    try:
        init = read_init()
    except EOFError:
        return
    server = Server(init)
    write_frame({"type": "ready", "caps": server.caps(), "pid": os.getpid()})
    server.serve()


if __name__ == "__main__":
    main()
