"""Authoring scan with Python's ast: blocked imports and constructs, and the
reserved SDK name. Runs in a contained child like user code, since parsing
hostile source is itself untrusted work."""
import ast
import re

from harness import SDK_NAME

_FORMAT_ATTR = re.compile(r"\{[^{}]*[.\[]\s*(_|gi_|f_|tb_|cr_|ag_|co_)")
_RESERVED = f"'{SDK_NAME}' is a reserved keyword (the injected SDK object) and cannot be defined or assigned"


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
        if isinstance(f, ast.Name):
            if f.id in self.policy.blocked_calls:
                self.add(node, f"call to '{f.id}' is not allowed")
            if f.id in ("getattr", "setattr", "delattr", "hasattr") and len(node.args) >= 2:
                a = node.args[1]
                if isinstance(a, ast.Constant) and isinstance(a.value, str) and a.value in self.policy.blocked_attrs:
                    self.add(node, f"access to attribute '{a.value}' is not allowed")
        self.generic_visit(node)

    def visit_Constant(self, node):
        if isinstance(node.value, str) and "{" in node.value and _FORMAT_ATTR.search(node.value):
            self.add(node, "format strings may not access private or internal attributes")

    def _def(self, node):
        self.reserved(node, node.name)
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
