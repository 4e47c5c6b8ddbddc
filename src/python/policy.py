"""Run-time policy for untrusted code: import allowlist, module proxies,
restricted builtins and an audit hook.

None of this is the security boundary (see sandbox_os.py); it exists so that
customers get clear errors and so that the obvious object-graph escapes
(`uuid.os`, `typing.sys`, frame walking) fail early.
"""
import builtins
import operator
import sys
import types

import hardening

_ModuleType = types.ModuleType
_real_import = builtins.__import__
_getattr = builtins.getattr


class Policy:
    def __init__(self, data, network):
        self.network = network
        self.allowed = set(data.get("allowedModules", []))
        self.network_modules = set(data.get("networkModules", []))
        if network:
            self.allowed |= self.network_modules
        self.blocked = set(data.get("blockedModules", [])) - (self.network_modules if network else set())
        self.blocked_calls = set(data.get("blockedCalls", []))
        self.blocked_attrs = frozenset(data.get("blockedAttributes", []))

    def refuses_attr(self, name):
        """Blocked attributes and every dunder but the plain ones (`__name__`, `__len__`, …)."""
        return name in self.blocked_attrs or (hardening.is_dunder(name) and name not in _SAFE_DUNDERS)

    def check_attr(self, name):
        if isinstance(name, str) and self.refuses_attr(name):
            raise AttributeError(f"access to attribute '{name}' is not allowed in caseflow code")

    @staticmethod
    def _prefixes(name):
        parts = name.split(".")
        return [".".join(parts[:i]) for i in range(1, len(parts) + 1)]

    def verdict(self, name):
        """'allowed', 'blocked', 'network' or 'unknown' for a module name."""
        prefixes = self._prefixes(name)
        if any(p in self.blocked for p in prefixes):
            return "blocked"
        if any(p in self.allowed for p in prefixes):
            return "allowed"
        if any(p in self.network_modules for p in prefixes):
            return "network"
        return "unknown"

    def reachable(self, name):
        """Allowed, or a package on the way to an allowed module (xml.etree)."""
        v = self.verdict(name)
        if v == "allowed":
            return True
        return v == "unknown" and any(a.startswith(name + ".") for a in self.allowed)

    def import_error(self, name):
        v = self.verdict(name)
        if v == "blocked":
            return ImportError(f"import of '{name}' is blocked by the caseflow Python policy")
        if v == "network":
            return ImportError(f"module '{name}' needs network access, which this call does not have")
        return ImportError(f"module '{name}' is not on the caseflow Python allowlist")


class Guard:
    """Everything user code sees: guarded __import__, proxied modules,
    restricted builtins."""

    def __init__(self, policy, formats):
        self.policy = policy
        self.proxies = {}
        # hardening.install()'s checked str.format, made once per server.
        self.formats = formats
        self.check_attr = policy.check_attr

    def proxy(self, module):
        """A copy of the module's namespace without modules that are not
        allowed (so `uuid.os` or `typing.sys` are not there) and with allowed
        submodules proxied too. Writes to the copy never reach the real module."""
        name = module.__name__
        cached = self.proxies.get(name)
        if cached is not None:
            return cached
        p = _ModuleType(name)
        self.proxies[name] = p
        ns = {}
        for key, value in module.__dict__.items():
            if isinstance(value, _ModuleType):
                if not self.policy.reachable(value.__name__):
                    continue
                value = self.proxy(value)
            elif key in ("__loader__", "__spec__", "__builtins__"):
                continue
            ns[key] = value
        if name == "operator":
            ns["attrgetter"] = self.attrgetter
            ns["methodcaller"] = self.methodcaller
        p.__dict__.update(ns)
        return p

    def getattr(self, obj, name, *default):
        """The builtin getattr of user code (and how `s.format` is read for a str `s`): refuses what
        the policy refuses, and hands out str's format methods only as their checked stand-ins."""
        self.check_attr(name)
        return self.formats.guard(name, _getattr(obj, name, *default))

    def attrgetter(self, *names):
        """operator.attrgetter resolving each dotted part with the guarded getattr, so
        `attrgetter('__glo' + 'bals__')` is no way around the policy (refused when made)."""
        operator.attrgetter(*names)  # the stdlib's own argument errors
        paths = [name.split(".") for name in names]
        for part in (p for path in paths for p in path):
            self.check_attr(part)
        resolve = self.getattr

        def get(obj):
            values = []
            for path in paths:
                value = obj
                for part in path:
                    value = resolve(value, part)
                values.append(value)
            return values[0] if len(values) == 1 else tuple(values)

        return get

    def methodcaller(self, name, /, *args, **kwargs):
        operator.methodcaller(name, *args, **kwargs)
        self.check_attr(name)
        resolve = self.getattr
        return lambda obj: resolve(obj, name)(*args, **kwargs)

    def guarded_import(self, name, globals=None, locals=None, fromlist=(), level=0):
        if level:
            raise ImportError("relative imports are not supported in caseflow code")
        if self.policy.verdict(name) != "allowed":
            # `from xml.etree import ElementTree`: a parent package is fine
            # when everything taken from it is allowed.
            if not (fromlist and self.policy.reachable(name)):
                raise self.policy.import_error(name)
            for item in fromlist:
                if self.policy.verdict(f"{name}.{item}") != "allowed":
                    raise self.policy.import_error(f"{name}.{item}")
        for item in fromlist or ():
            sub = f"{name}.{item}"
            if self.policy.verdict(sub) == "blocked":
                raise self.policy.import_error(sub)
        _real_import(name, None, None, fromlist or (), 0)
        if fromlist:
            return self.proxy(sys.modules[name])
        return self.proxy(sys.modules[name.partition(".")[0]])

    def builtins(self):
        check = self.check_attr

        def setattr_(obj, name, value):
            check(name)
            return setattr(obj, name, value)

        def delattr_(obj, name):
            check(name)
            return delattr(obj, name)

        def hasattr_(obj, name):
            check(name)
            return hasattr(obj, name)

        b = dict(builtins.__dict__)
        for name in self.policy.blocked_calls:
            b.pop(name, None)
        for name in ("copyright", "credits", "license", "__loader__", "__spec__"):
            b.pop(name, None)
        b["__import__"] = self.guarded_import
        b["getattr"] = self.getattr
        b[hardening.RECEIVER_HOOK] = hardening.format_receiver(self.getattr)
        b["setattr"] = setattr_
        b["delattr"] = delattr_
        b["hasattr"] = hasattr_
        return b


_SAFE_DUNDERS = frozenset({
    "__name__", "__qualname__", "__doc__", "__module__", "__class__", "__init__",
    "__len__", "__iter__", "__next__", "__str__", "__repr__", "__eq__", "__hash__", "__call__",
    "__getitem__", "__setitem__", "__contains__", "__enter__", "__exit__", "__annotations__",
    "__dataclass_fields__", "__slots__", "__version__",
})

_DENY_EVENTS = (
    "os.system", "os.exec", "os.fork", "os.forkpty", "os.posix_spawn", "os.spawn", "os.kill",
    "os.killpg", "subprocess.Popen", "sys.settrace", "sys.setprofile",
    "sys._current_frames", "code.__new__", "function.__new__",
    "os.putenv", "os.unsetenv", "os.chroot", "os.setuid", "pty.spawn", "gc.get_referrers",
    "gc.get_referents", "gc.get_objects", "cpython.PyInterpreterState_New", "cpython.run_command", "cpython.run_file",
    "sys.addaudithook", "setopencodehook", "sys.unraisablehook",
)


_FRAME_ATTRS = frozenset({"gi_frame", "cr_frame", "ag_frame", "tb_frame", "f_back"})


def install_audit_hook(network, privileged_codes, stdlib_dir):
    """Installed once per child just before user code; cannot be removed.
    CPython audits reads of frame/code attributes ('object.__getattr__'):
    frame attributes only our traceback formatter (privileged_codes) may read;
    code attributes the stdlib may read too (inspect, used by dataclasses).
    The caller is found via sys._getframe under a re-entrancy guard."""
    busy = []
    deny = _DENY_EVENTS
    getframe = sys._getframe

    def hook(event, args):
        if busy:
            return
        if event == "object.__getattr__":
            busy.append(1)
            try:
                code = getframe(1).f_code
                ok = code in privileged_codes or (
                    args[1] not in _FRAME_ATTRS and code.co_filename.startswith(stdlib_dir))
            finally:
                busy.pop()
            if not ok:
                raise RuntimeError(f"access to '{args[1]}' is not allowed in caseflow code")
            return
        if event.startswith("ctypes."):
            raise RuntimeError("ctypes is not allowed in caseflow code")
        if event.startswith(deny):
            raise RuntimeError(f"operation '{event}' is not allowed in caseflow code")
        if event.startswith("socket."):
            if not network:
                raise RuntimeError("network access is not enabled for this call")
            if event == "socket.bind":
                raise RuntimeError("listening sockets are not allowed")

    sys.addaudithook(hook)
