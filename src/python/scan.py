"""Authoring scan with Python's ast: blocked imports and constructs, and the
reserved SDK name. Runs in a contained child like user code, since parsing
hostile source is itself untrusted work."""
import ast
import re

from hardening import is_dunder
from harness import SDK_NAME

_FORMAT_ATTR = re.compile(r"\{[^{}]*[.\[]\s*(_|gi_|f_|tb_|cr_|ag_|co_)")
_RESERVED = f"'{SDK_NAME}' is a reserved keyword (the injected SDK object) and cannot be defined or assigned"
# Calls that take attribute names as strings: the positions of those names (None: every argument).
_NAME_TAKING = {"getattr": (1,), "setattr": (1,), "delattr": (1,), "hasattr": (1,),
                "attrgetter": None, "methodcaller": (0,)}
_WRAPPER_NAMES = ("assigned", "updated")


def _call_name(f):
    if isinstance(f, ast.Name):
        return f.id
    return f.attr if isinstance(f, ast.Attribute) else None


def _strings(node):
    """The string constants of a constant or a literal tuple/list of them."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List)):
        return [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return []


class Scanner(ast.NodeVisitor):
    def __init__(self, policy, max_exponent):
        self.policy = policy
        self.max_exponent = max_exponent
        self.violations = []

    def add(self, node, message):
        self.violations.append({"line": getattr(node, "lineno", 1), "col": getattr(node, "col_offset", 0) + 1,
                                "message": message})

    def reserved(self, node, name):
        if name == SDK_NAME:
            self.add(node, _RESERVED)

    def check_module(self, node, name):
        if self.policy.verdict(name) == "blocked":
            self.add(node, f"import of '{name}' is blocked")

    def visit_Import(self, node):
        for alias in node.names:
            self.check_module(node, alias.name)
            self.reserved(node, alias.asname or alias.name.partition(".")[0])
        self.generic_visit(node)

    def visit_ImportFrom(self, node):
        if node.level:
            self.add(node, "relative imports are not supported")
        elif node.module:
            self.check_module(node, node.module)
            if self.policy.verdict(node.module) != "blocked":
                for alias in node.names:
                    if self.policy.verdict(f"{node.module}.{alias.name}") == "blocked":
                        self.add(node, f"import of '{node.module}.{alias.name}' is blocked")
        for alias in node.names:
            self.reserved(node, alias.asname or alias.name)
        self.generic_visit(node)

    def visit_Name(self, node):
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            self.reserved(node, node.id)
        if node.id in self.policy_names:
            self.add(node, f"use of '{node.id}' is not allowed")
        self.generic_visit(node)

    def visit_Attribute(self, node):
        if node.attr in self.policy.blocked_attrs:
            self.add(node, f"access to attribute '{node.attr}' is not allowed")
        self.generic_visit(node)

    def visit_Call(self, node):
        f = node.func
        name = _call_name(f)
        if isinstance(f, ast.Name) and f.id in self.policy.blocked_calls:
            self.add(node, f"call to '{f.id}' is not allowed")
        # The same names the run-time getattr, attrgetter and methodcaller refuse, when written out.
        if name in _NAME_TAKING:
            positions = _NAME_TAKING[name]
            args = node.args if positions is None else [node.args[i] for i in positions if i < len(node.args)]
            for value in (s for a in args for s in _strings(a)):
                self.check_attr_name(node, value)
        if name in ("update_wrapper", "wraps"):
            for kw in node.keywords:
                if kw.arg in _WRAPPER_NAMES:
                    for value in _strings(kw.value):
                        self.check_attr_name(node, value)
        if name == "get_field" and node.args and _strings(node.args[0]):
            self.check_format(node, "{" + _strings(node.args[0])[0] + "}")
        if name == "ForwardRef" and node.args:
            for value in _strings(node.args[0]):
                self.check_annotation(node, value)
        self.generic_visit(node)

    def check_attr_name(self, node, name):
        for part in name.split("."):
            if self.policy.refuses_attr(part):
                self.add(node, f"access to attribute '{part}' is not allowed")

    def check_format(self, node, text):
        if "{" in text and _FORMAT_ATTR.search(text):
            self.add(node, "format strings may not access private or internal attributes")

    def check_annotation(self, node, text):
        """typing evaluates string annotations: the attributes they name are checked like code."""
        try:
            tree = ast.parse(text.strip(), mode="eval")
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return
        for sub in ast.walk(tree):
            if isinstance(sub, ast.Attribute) and (is_dunder(sub.attr) or sub.attr in self.policy.blocked_attrs):
                self.add(node, f"access to attribute '{sub.attr}' is not allowed (in a string annotation)")

    def visit_Constant(self, node):
        if isinstance(node.value, str):
            self.check_format(node, node.value)

    def _annotations(self, node):
        args = node.args
        for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg):
            if arg is not None and arg.annotation is not None:
                for value in _strings(arg.annotation):
                    self.check_annotation(arg.annotation, value)
        if node.returns is not None:
            for value in _strings(node.returns):
                self.check_annotation(node.returns, value)

    def visit_AnnAssign(self, node):
        for value in _strings(node.annotation):
            self.check_annotation(node.annotation, value)
        if node.value is not None:
            self.check_match_args(node, [node.target], node.value)
        self.generic_visit(node)

    def visit_Assign(self, node):
        self.check_match_args(node, node.targets, node.value)
        self.generic_visit(node)

    def check_match_args(self, node, targets, value):
        """A class pattern `C(x)` reads the attributes `C.__match_args__` names from whatever
        matches C (a metaclass or ABC can make that any object): only plain names, written out."""
        if not any(_call_name(t) == "__match_args__" for t in targets):
            return
        names = value.elts if isinstance(value, (ast.Tuple, ast.List)) else [value]
        for e in names:
            if not (isinstance(e, ast.Constant) and isinstance(e.value, str)):
                self.add(node, "__match_args__ must be a tuple of attribute names written out")
            elif is_dunder(e.value) or e.value in self.policy.blocked_attrs:
                self.add(node, f"match pattern on attribute '{e.value}' is not allowed")

    def _def(self, node):
        self.reserved(node, node.name)
        if not isinstance(node, ast.ClassDef):
            self._annotations(node)
        self.generic_visit(node)

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _def

    def visit_arg(self, node):
        self.reserved(node, node.arg)
        self.generic_visit(node)

    def visit_Global(self, node):
        for name in node.names:
            self.reserved(node, name)

    visit_Nonlocal = visit_Global

    def visit_ExceptHandler(self, node):
        if node.name:
            self.reserved(node, node.name)
        self.generic_visit(node)

    def visit_MatchAs(self, node):
        if node.name:
            self.reserved(node, node.name)
        self.generic_visit(node)

    def visit_MatchStar(self, node):
        if node.name:
            self.reserved(node, node.name)

    def visit_MatchMapping(self, node):
        if node.rest:
            self.reserved(node, node.rest)
        self.generic_visit(node)

    def visit_MatchClass(self, node):
        for attr in node.kwd_attrs:
            if attr in self.policy.blocked_attrs or attr.startswith("__"):
                self.add(node, f"match pattern on attribute '{attr}' is not allowed")
        self.generic_visit(node)

    def visit_BinOp(self, node):
        # 10**10**8 or 1 << 10**10: constant work that would burn the CPU limit.
        if isinstance(node.op, (ast.Pow, ast.LShift)):
            r = node.right
            if isinstance(r, ast.BinOp) and isinstance(r.op, ast.Pow):
                self.add(node, "constant exponent is too large")
            elif isinstance(r, ast.Constant) and isinstance(r.value, int) and r.value > self.max_exponent:
                self.add(node, "constant exponent is too large")
        self.generic_visit(node)


def scan(source, policy, blocked_names, max_exponent):
    try:
        tree = ast.parse(source, "<code>")
    except SyntaxError as e:
        return [{"line": e.lineno or 1, "col": e.offset or 1, "message": f"SyntaxError: {e.msg}"}]
    except (ValueError, RecursionError, MemoryError) as e:
        return [{"line": 1, "col": 1, "message": f"source cannot be parsed: {type(e).__name__}"}]
    s = Scanner(policy, max_exponent)
    s.policy_names = frozenset(blocked_names)
    try:
        s.visit(tree)
    except RecursionError:
        s.violations.append({"line": 1, "col": 1, "message": "source is nested too deeply"})
    s.violations.sort(key=lambda v: (v["line"], v["col"]))
    return s.violations
