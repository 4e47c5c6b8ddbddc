"""Runs one request inside an already-contained child and builds the result.

Two forms: 'main' (code nodes: module defining main(inputs) -> dict, with the
SDK object `caseflow` injected into main's globals only for the call) and
'script' (integration actions: code run at module level with `input_data`,
`credential_value` and `result`).
"""
import base64
import datetime
import errno
import json
import types

import hardening

SDK_NAME = "caseflow"
OUTPUT_CAP = 1 << 20  # stdout, stderr and outputs JSON: 1 MB each
FILE_CAP = 10 << 20  # bytes of files made with caseflow.make_file, in total
LOG_CAP = 1000
LOG_LEVELS = ("debug", "info", "warning", "error")


class UserError(Exception):
    """An error attributed to the customer's code, with a chosen kind."""

    def __init__(self, kind, message, tb=None):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.tb = tb


class CappedWriter:
    """Replaces sys.stdout/sys.stderr for print(); keeps the first 1 MB."""

    def __init__(self):
        self.parts = []
        self.size = 0
        self.truncated = False

    def write(self, s):
        if not isinstance(s, str):
            raise TypeError(f"write() argument must be str, not {type(s).__name__}")
        room = OUTPUT_CAP - self.size
        if len(s) > room:
            s = s[:max(room, 0)]
            self.truncated = True
        if s:
            self.parts.append(s)
            self.size += len(s)
        return len(s)

    def flush(self):
        pass

    def value(self):
        text = "".join(self.parts)
        return text + "\n[output truncated at 1 MB]" if self.truncated else text


class Sdk:
    """The object user code sees as `caseflow`."""

    def __init__(self, inputs, files, logs):
        self._files = files or {}
        self._logs = logs
        self._made = [0]
        self.inputs = types.MappingProxyType(inputs)

    def log(self, message, level="info"):
        if level not in LOG_LEVELS:
            raise ValueError(f"caseflow.log: level must be one of {', '.join(LOG_LEVELS)}")
        if len(self._logs) >= LOG_CAP:
            return
        self._logs.append({
            "level": level,
            "message": str(message)[:8192],
            "at": datetime.datetime.now(datetime.timezone.utc).isoformat(),
        })

    def _file(self, url, fn):
        entry = self._files.get(url) if isinstance(url, str) else None
        if entry is None:
            raise FileNotFoundError(
                f"caseflow.{fn}: unknown file URL {url!r} (only the file inputs of this node can be read)")
        return entry

    def read_file(self, url):
        return self._file(url, "read_file")["data"]

    def file_info(self, url):
        entry = self._file(url, "file_info")
        return {
            "url": url,
            "name": entry.get("name"),
            "contentType": entry.get("contentType"),
            "size": len(entry["data"]),
        }

    def make_file(self, name, data, content_type="application/octet-stream"):
        if isinstance(data, str):
            data = data.encode("utf-8")
        if not isinstance(data, (bytes, bytearray)):
            raise TypeError("caseflow.make_file: data must be bytes or str")
        if not isinstance(name, str) or not name:
            raise ValueError("caseflow.make_file: name must be a non-empty string")
        self._made[0] += len(data)
        if self._made[0] > FILE_CAP:
            raise UserError("limit", "caseflow.make_file: files made in one call exceed 10 MB")
        return {"$file": {"name": name, "contentType": str(content_type),
                          "base64": base64.b64encode(bytes(data)).decode("ascii")}}


def _json_default(value):
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    if isinstance(value, types.MappingProxyType):
        return dict(value)
    raise TypeError(f"value of type {type(value).__name__} is not JSON-serializable")


def _type_ok(t, v):
    if t == "str":
        return isinstance(v, str)
    if t == "int":
        return isinstance(v, int) and not isinstance(v, bool)
    if t == "float":
        return isinstance(v, (int, float)) and not isinstance(v, bool)
    if t == "bool":
        return isinstance(v, bool)
    if t == "object":
        return isinstance(v, dict)
    if t == "array":
        return isinstance(v, (list, tuple))
    if t == "file":
        return (isinstance(v, dict) and set(v) == {"$file"}) or isinstance(v, str)
    if t == "date":
        if isinstance(v, (datetime.date, datetime.datetime)):
            return True
        if isinstance(v, str):
            try:
                datetime.datetime.fromisoformat(v)
                return True
            except ValueError:
                return False
        return False
    if t == "json_string":
        if not isinstance(v, str):
            return False
        try:
            json.loads(v)
            return True
        except ValueError:
            return False
    if t == "binary":
        return isinstance(v, (bytes, bytearray, str))
    if t == "node":
        return isinstance(v, (str, dict))
    return False


def check_outputs(outputs, declared, require_all):
    """declared: {name: [type names]}; None means nothing declared (no check).
    None values pass every type (they are JSON null)."""
    if not isinstance(outputs, dict):
        raise UserError("output", f"main() must return a dict, got {type(outputs).__name__}")
    for key in outputs:
        if not isinstance(key, str):
            raise UserError("output", f"output keys must be strings, got {type(key).__name__}")
    if declared is None:
        return
    for key, value in outputs.items():
        if key not in declared:
            raise UserError("output", f"output '{key}' is not a declared output (declared: {', '.join(sorted(declared)) or 'none'})")
        types_ = declared[key]
        if value is not None and types_ and not any(_type_ok(t, value) for t in types_):
            raise UserError("output", f"output '{key}' has type {type(value).__name__}, expected {' or '.join(types_)}")
    if require_all:
        missing = [k for k in declared if k not in outputs]
        if missing:
            raise UserError("output", f"main() did not return declared output(s): {', '.join(missing)}")


def serialize_outputs(outputs):
    try:
        text = json.dumps(outputs, default=_json_default, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as e:
        raise UserError("output", f"outputs are not JSON-serializable: {e}")
    files = sum(len(v["$file"]["base64"]) for v in outputs.values()
                if isinstance(v, dict) and isinstance(v.get("$file"), dict))
    if len(text) - files > OUTPUT_CAP:
        raise UserError("output", "outputs exceed 1 MB (files made with caseflow.make_file count separately)")
    return text


def format_tb(tb, source_lines):
    """Traceback limited to the customer's own frames (filename '<code>').
    The audit hook lets only this function's code object read frames."""
    lines = []
    while tb is not None:
        frame = tb.tb_frame
        code = frame.f_code
        if code.co_filename == "<code>":
            lineno = tb.tb_lineno
            lines.append(f'  line {lineno}, in {code.co_name}')
            if 0 < lineno <= len(source_lines):
                lines.append("    " + source_lines[lineno - 1].strip())
        tb = tb.tb_next
    return lines


def describe(exc, source_lines):
    tb = format_tb(exc.__traceback__, source_lines)
    try:
        text = str(exc)
    except BaseException:
        text = "<unprintable>"
    message = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    return message, "Traceback (most recent call last):\n" + "\n".join(tb + [message]) if tb else None


PRIVILEGED = frozenset({format_tb.__code__})


def execute(req, guard, stdout, stderr, logs, scratch_mb):
    """Returns the outputs dict, or raises UserError."""
    source = req.get("source", "")
    source_lines = source.splitlines()
    form = req.get("form")
    inputs = req.get("inputs") or {}
    if not isinstance(inputs, dict):
        raise UserError("error", "inputs must be an object")
    try:
        code = hardening.compile_user_code(source)
    except SyntaxError as e:
        raise UserError("error", f"SyntaxError: {e.msg} (line {e.lineno})")
    g = {"__name__": "__caseflow__", "__builtins__": guard.builtins()}
    try:
        if form == "script":
            g["input_data"] = inputs
            g["credential_value"] = req.get("credentialValue")
            g["result"] = {}
            exec(code, g)
            outputs = g.get("result")
            check_outputs(outputs, req.get("declaredOutputs"), False)
            return outputs
        exec(code, g)
        main = g.get("main")
        if not callable(main):
            raise UserError("error", "main(inputs) not defined")
        g[SDK_NAME] = Sdk(inputs, req.get("files"), logs)
        try:
            outputs = main(inputs)
        finally:
            g.pop(SDK_NAME, None)
        check_outputs(outputs, req.get("declaredOutputs"), True)
        return outputs
    except UserError:
        raise
    except MemoryError:
        raise UserError("limit", "memory limit exceeded")
    except RecursionError as e:
        message, tb = describe(e, source_lines)
        raise UserError("error", message, tb)
    except OSError as e:
        message, tb = describe(e, source_lines)
        if e.errno == errno.ENOSPC:  # the call's own tmpfs is full: say whose limit it is
            raise UserError("limit", f"{message} (this call's scratch space is limited to {scratch_mb} MB)", tb)
        raise UserError("error", message, tb)
    except BaseException as e:  # SystemExit and KeyboardInterrupt included: user code is not trusted
        message, tb = describe(e, source_lines)
        raise UserError("error", message, tb)
