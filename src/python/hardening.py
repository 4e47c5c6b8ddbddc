"""Run-time closing of the ways around the attribute policy that a name built at run time opens.

The authoring scan sees `f.__globals__` and `'{0.__globals__}'`, not `'__glo' + 'bals__'`,
`bytes(...).decode()` or `''.join(map(chr, ...))`. So everything that turns a *string* into an
attribute access at run time is checked in the child: the builtins getattr & co. and
operator.attrgetter/methodcaller (policy.Guard), and here the rest of the family: format fields
(`str.format`, `str.format_map`, `string.Formatter` and its subclasses, `collections.UserString`),
`functools.update_wrapper`'s name lists and typing's evaluation of string annotations.

This is policy for clear errors, not the boundary (the OS layers are). The stdlib is patched once
per server, before the zygote forks: the checks are the same for every call, and writing to
preloaded classes in each child would copy their pages (about 0.15-0.25 ms a call, measured).
"""
import _string
import ast
import builtins
import collections
import functools
import string
import typing

# `x.format` in user code becomes `__caseflow_format_receiver__(x).format` (a builtin of the call).
RECEIVER_HOOK = "__caseflow_format_receiver__"
FORMAT_METHODS = {"format": str.format, "format_map": str.format_map}
_BuiltinMethod = type("".format)


def is_dunder(name):
    return isinstance(name, str) and name.startswith("__") and name.endswith("__")


def refused(what, name, where):
    return AttributeError(f"access to {what} '{name}' is not allowed in caseflow code ({where})")


class FieldPolicy:
    """What a format field, and a string annotation typing evaluates, may reach: no dunder
    attribute or item, no blocked attribute (frames, code objects)."""

    def __init__(self, blocked_attrs):
        self.blocked_attrs = blocked_attrs

    def check_field(self, field_name):
        _, rest = _string.formatter_field_name_split(field_name)
        for is_attr, key in rest:
            if is_attr and (is_dunder(key) or key in self.blocked_attrs):
                raise refused("attribute", key, f"format field '{field_name}'")
            if not is_attr and is_dunder(key):
                raise refused("item", key, f"format field '{field_name}'")

    def check_template(self, template):
        """Every replacement field of a format string, those nested in format specs too."""
        if "{" not in template:
            return
        for _, field, spec, _ in _string.formatter_parser(template):
            if field:
                self.check_field(field)
            if spec:
                self.check_template(spec)

    def check_code(self, code):
        """Names and attributes a compiled expression (and the code nested in it) uses."""
        for name in code.co_names:
            if is_dunder(name) or name in self.blocked_attrs:
                raise refused("attribute", name, "in a string annotation")
        for const in code.co_consts:
            if isinstance(const, type(code)):
                self.check_code(const)


class SafeFormat:
    """`str.format` and `str.format_map` that refuse format fields reaching dunders first."""

    def __init__(self, fields):
        self.fields = fields
        self.unbound = {"format": self.format, "format_map": self.format_map}

    def format(self, template, /, *args, **kwargs):
        if isinstance(template, str):
            self.fields.check_template(template)
        return str.format(template, *args, **kwargs)

    def format_map(self, template, mapping, /):
        if isinstance(template, str):
            self.fields.check_template(template)
        return str.format_map(template, mapping)

    def guard(self, name, value):
        """The checked stand-in when `value` (got by attribute `name`) is str's own format method."""
        if name not in FORMAT_METHODS:
            return value
        if value is FORMAT_METHODS[name]:
            return self.unbound[name]
        if type(value) is _BuiltinMethod and value.__name__ == name and isinstance(value.__self__, str):
            return functools.partial(self.unbound[name], value.__self__)
        return value


class _Receiver:
    """Stands in for a str (or a str type) whose `.format`/`.format_map` is read: the read goes
    through the guarded getattr, which hands out the checked method."""

    __slots__ = ("_obj", "_getattr")

    def __init__(self, obj, getattr_):
        self._obj = obj
        self._getattr = getattr_

    def __getattr__(self, name):
        return self._getattr(self._obj, name)


def format_receiver(getattr_):
    """The builtin RECEIVER_HOOK: any other object is returned as it is."""

    def receiver(obj):
        if isinstance(obj, str) or (isinstance(obj, type) and issubclass(obj, str)):
            return _Receiver(obj, getattr_)
        return obj

    return receiver


def compile_user_code(source):
    """Compiles customer code with every `x.format` / `x.format_map` read as
    `RECEIVER_HOOK(x).format`: str's own methods belong to a C type, which cannot be patched.
    The tree is changed in place (no transformer pass: about 1.9x a plain compile, not 2.8x).
    Source that cannot name them (ASCII without 'format': NFKC folds other letters into
    identifiers) compiles as is."""
    if source.isascii() and "format" not in source:
        return compile(source, "<code>", "exec", dont_inherit=True)
    tree = ast.parse(source, "<code>")
    for node in ast.walk(tree):
        if type(node) is ast.Attribute and node.attr in FORMAT_METHODS and type(node.ctx) is ast.Load:
            value = node.value
            call = ast.Call(ast.Name(RECEIVER_HOOK, ast.Load()), [value], [])
            for made in (call, call.func):
                ast.copy_location(made, value)
            node.value = call
    return compile(tree, "<code>", "exec", dont_inherit=True)


def install(blocked_attrs, check_attr):
    """Patches the stdlib helpers that resolve attribute names or evaluate strings with the same
    checks as the guarded getattr; returns the checked str.format the guards hand out."""
    fields = FieldPolicy(blocked_attrs)
    safe_format = SafeFormat(fields)
    get_field = string.Formatter.get_field

    def guarded_get_field(formatter, field_name, args, kwargs):
        fields.check_field(field_name)
        return get_field(formatter, field_name, args, kwargs)

    # On the class itself, so subclasses and super() find only the checked one.
    string.Formatter.get_field = guarded_get_field

    def user_string_format(self, /, *args, **kwargs):
        return safe_format.format(self.data, *args, **kwargs)

    def user_string_format_map(self, mapping):
        return safe_format.format_map(self.data, mapping)

    collections.UserString.format = user_string_format
    collections.UserString.format_map = user_string_format_map

    update_wrapper = functools.update_wrapper
    defaults = frozenset(functools.WRAPPER_ASSIGNMENTS + functools.WRAPPER_UPDATES)

    def guarded_update_wrapper(wrapper, wrapped, assigned=functools.WRAPPER_ASSIGNMENTS,
                               updated=functools.WRAPPER_UPDATES):
        for name in (*assigned, *updated):
            if name not in defaults:
                check_attr(name)
        return update_wrapper(wrapper, wrapped, assigned, updated)

    # functools.wraps looks update_wrapper up in its module at each call.
    functools.update_wrapper = guarded_update_wrapper

    real_eval = eval
    real_builtins = (builtins, builtins.__dict__)

    def guarded_eval(code, globalns, localns):
        """typing's only eval (ForwardRef._evaluate). A module's namespace (`module=`) has the real
        builtins and maybe `os`; a dict without `__builtins__` would get the real ones from eval.
        The code's own globals (or a dict of its own builtins) have nothing of that."""
        own = globalns.get("__builtins__") if isinstance(globalns, dict) else None
        if own is None or own in real_builtins:
            raise RuntimeError("caseflow code may evaluate string annotations only in its own namespace")
        fields.check_code(code)
        return real_eval(code, globalns, localns)

    # A module global shadows the builtin for typing's own code.
    typing.eval = guarded_eval
    return safe_format
