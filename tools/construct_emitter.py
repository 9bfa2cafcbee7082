"""Emit Construct 2.10 codecs from the .ksy specs: the build half of every layout.

Kaitai's own `construct` target cannot handle our specs (params, positioned instances,
substreams), so this emitter translates the subset the specs use:

| Kaitai                          | Construct                                              |
|---------------------------------|--------------------------------------------------------|
| `seq` of a type                 | `Struct`, one function per type (params as arguments)  |
| params                          | leading `Computed` fields evaluated in the parent      |
| u1..u8, s1..s8 (be/le)          | `Int8ub` .. `Int64sl`                                  |
| `size` (+ `type`)               | `Bytes` / `KsSized`                                    |
| `size-eos` (bytes)              | `GreedyBytes`                                          |
| `repeat: expr / eos`            | `KsRepeat` (keeps `_index` and partial lists)          |
| `if`                            | `If`                                                   |
| `switch-on`                     | `Switch`, raw bytes by default when sized              |
| `contents`, `valid`             | `Const`, `Check`                                       |
| `-checksum: {algorithm, over}`  | `Checksum` over the listed consecutive fields (`KsSpan`) |
| `value` instances               | inlined into the expressions that use them             |
| `pos` instances (+ `io`)        | `KsInstance` fields after the sequence (deferred reads) |
| `pos: _io.size - N` (a footer)  | `KsInstance`, built last at the end by `KsTrailer`     |
| expressions                     | Python source over `this` (`KsExpr`), compilable       |

Anything else fails generation with the spec and field named.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

PRIMITIVES = {"u1": "Int8ub", "s1": "Int8sb"}
for _bits in (16, 32, 64):
    for _sign, _kind in (("u", "u"), ("s", "s")):
        for _end in ("be", "le"):
            PRIMITIVES[f"{_sign}{_bits // 8}{_end}"] = f"Int{_bits}{_kind}{'b' if _end == 'be' else 'l'}"


class EmitError(Exception):
    """The spec uses something this emitter cannot translate."""


@dataclass(frozen=True)
class Ty:
    """Static type of an expression, as far as the emitter needs it."""

    kind: str                     # "user", "bytes", "int", "io", "bool", "unknown"
    spec: str = ""
    path: tuple[str, ...] = ()
    array: bool = False

    def element(self) -> Ty:
        return Ty(self.kind, self.spec, self.path)


UNKNOWN = Ty("unknown")


@dataclass
class Scope:
    """Where an expression is evaluated: the context's source and the type it belongs to."""

    ctx: str
    ty: Ty
    underscore: str | None = None


# ---------------------------------------------------------------------------- expressions

TOKEN = re.compile(r"""\s*(?:
    (?P<num>0x[0-9a-fA-F_]+|0b[01_]+|\d[\d_]*)
  | (?P<str>'[^']*'|"[^"]*")
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*(?:::[A-Za-z_][A-Za-z0-9_]*)*)
  | (?P<op><<|>>|<=|>=|==|!=|[-+*/%<>&|^~?:()\[\].,])
)""", re.VERBOSE)

BINARY = [  # lowest to highest precedence
    ("or",), ("and",), ("==", "!=", "<", "<=", ">", ">="), ("|",), ("^",), ("&",),
    ("<<", ">>"), ("+", "-"), ("*", "/", "%"),
]


class ExprTranslator:
    """Kaitai expression text -> Python source over the Construct context."""

    def __init__(self, emitter: Emitter, text: str | int | bool, scope: Scope, where: str) -> None:
        self.emitter = emitter
        self.scope = scope
        self.where = where
        self.tokens = self._lex(str(text).strip() if not isinstance(text, bool) else ("true" if text else "false"))
        self.i = 0

    def _lex(self, text: str) -> list[tuple[str, str]]:
        tokens, pos = [], 0
        text = text.replace("\n", " ")
        while pos < len(text):
            if text[pos].isspace():
                pos += 1
                continue
            m = TOKEN.match(text, pos)
            if not m:
                raise EmitError(f"{self.where}: cannot read expression {text!r} at {text[pos:]!r}")
            kind = m.lastgroup
            tokens.append((kind, m.group(kind)))
            pos = m.end()
        return tokens

    def peek(self) -> str | None:
        return self.tokens[self.i][1] if self.i < len(self.tokens) else None

    def take(self, expected: str | None = None) -> tuple[str, str]:
        if self.i >= len(self.tokens):
            raise EmitError(f"{self.where}: expression ends early")
        token = self.tokens[self.i]
        if expected is not None and token[1] != expected:
            raise EmitError(f"{self.where}: expected {expected!r}, found {token[1]!r}")
        self.i += 1
        return token

    def translate(self) -> tuple[str, Ty]:
        src, ty = self.ternary()
        if self.i != len(self.tokens):
            raise EmitError(f"{self.where}: unexpected {self.peek()!r} in expression")
        return src, ty

    def ternary(self) -> tuple[str, Ty]:
        cond, ty = self.binary(0)
        if self.peek() == "?":
            self.take()
            then, then_ty = self.ternary()
            self.take(":")
            other, _ = self.ternary()
            return f"(({then}) if ({cond}) else ({other}))", then_ty
        return cond, ty

    def binary(self, level: int) -> tuple[str, Ty]:
        if level == len(BINARY):
            return self.unary()
        left, ty = self.binary(level + 1)
        while self.peek() in BINARY[level]:
            op = self.take()[1]
            right, _ = self.binary(level + 1)
            left, ty = f"({left} {'//' if op == '/' else op} {right})", Ty("int")
        return left, ty

    def unary(self) -> tuple[str, Ty]:
        if self.peek() in ("-", "~"):
            op = self.take()[1]
            src, _ = self.unary()
            return f"({op}{src})", Ty("int")
        if self.peek() == "not":
            self.take()
            src, _ = self.unary()
            return f"(not {src})", Ty("bool")
        return self.postfix()

    def postfix(self) -> tuple[str, Ty]:
        src, ty = self.primary()
        while self.peek() in (".", "["):
            if self.take()[1] == "[":
                index, _ = self.ternary()
                self.take("]")
                src, ty = f"{src}[{index}]", ty.element()
                continue
            name = self.take()[1]
            if name == "as":
                self.take("<")
                target = self.take()[1]
                self.take(">")
                ty = self.emitter.resolve_type(target, ty if ty.kind == "user" else self.scope.ty, self.where)
                continue
            src, ty = self.member(src, ty, name)
        return src, ty

    def member(self, src: str, ty: Ty, name: str) -> tuple[str, Ty]:
        if ty.kind == "io":
            if name == "pos":
                return f"{src}.tell()", Ty("int")
            if name == "size":   # the whole stream: parsed, or built so far
                return f"{src}.getbuffer().nbytes", Ty("int")
            raise EmitError(f"{self.where}: _io.{name} is not supported")
        if ty.kind == "user" and not ty.array and name in ("_parent", "_io"):    # `_parent._parent`
            return (f"{src}['_']", self.emitter.parent_type(ty)) if name == "_parent" \
                else (f"{src}['_io']", Ty("io"))
        if ty.kind == "user" and not ty.array:
            spec = self.emitter.type_spec(ty)
            if name in spec.get("instances", {}) and "value" in spec["instances"][name]:
                return self.emitter.inline(ty, name, Scope(src, ty), self.where), UNKNOWN
            fty = self.emitter.field_type(ty, name)
            if fty is not None:
                return f"{src}[{name!r}]", fty
        if name in ("length", "size"):
            return f"len({src})", Ty("int")
        return f"{src}[{name!r}]", UNKNOWN

    def primary(self) -> tuple[str, Ty]:
        kind, text = self.take()
        if text == "[":     # a byte array literal
            items: list[str] = []
            while self.peek() != "]":
                items.append(self.ternary()[0])
                if self.peek() == ",":
                    self.take()
            self.take("]")
            return f"bytes([{', '.join(items)}])", Ty("bytes")
        if text == "(":
            src, ty = self.ternary()
            self.take(")")
            return f"({src})", ty
        if kind == "num":
            return str(int(text.replace("_", ""), 0)), Ty("int")
        if kind == "str":
            return repr(text[1:-1].encode()), Ty("bytes")
        if kind != "name":
            raise EmitError(f"{self.where}: unexpected {text!r}")
        if text in ("true", "false"):
            return ("True" if text == "true" else "False"), Ty("bool")
        if "::" in text:
            return str(self.emitter.enum_value(text, self.scope.ty, self.where)), Ty("int")
        ctx, ty = self.scope.ctx, self.scope.ty
        if text == "_":
            if self.scope.underscore is None:
                raise EmitError(f"{self.where}: `_` outside a validation")
            return self.scope.underscore, UNKNOWN
        if text == "_root":   # one per parse, reachable from every context
            return "this['_root']", Ty("user", ty.spec, ())
        if text == "_parent":
            return f"{ctx}['_']", self.emitter.parent_type(ty)
        if text == "_io":
            return f"{ctx}['_io']", Ty("io")
        if text == "_index":
            return f"{ctx}['_index']", Ty("int")
        return self.member(ctx, ty, text)


# ---------------------------------------------------------------------------- the emitter

@dataclass
class Emitter:
    specs: dict[str, dict]
    functions: list[str] = field(default_factory=list)

    # -- lookups

    def type_spec(self, ty: Ty) -> dict:
        spec = self.specs[ty.spec]
        for part in ty.path:
            spec = spec["types"][part]
        return spec

    def resolve_type(self, name: str, scope_ty: Ty, where: str) -> Ty:
        """A user type named in `scope_ty` (nested scopes outward, then `spec::type`)."""
        if "::" in name:
            spec, _, rest = name.partition("::")
            if spec not in self.specs:
                raise EmitError(f"{where}: unknown spec {spec!r}")
            return self.resolve_type(rest, Ty("user", spec, ()), where)
        if name == scope_ty.spec and not scope_ty.path:
            return Ty("user", scope_ty.spec, ())
        path = scope_ty.path
        while True:
            spec = self.type_spec(Ty("user", scope_ty.spec, path))
            if name in spec.get("types", {}):
                return Ty("user", scope_ty.spec, path + (name,))
            if not path:
                if name in self.specs and name != scope_ty.spec:
                    return Ty("user", name, ())
                raise EmitError(f"{where}: unknown type {name!r}")
            path = path[:-1]

    def enum_value(self, ref: str, scope_ty: Ty, where: str) -> int:
        *enum_path, member = ref.split("::")
        enum_name = enum_path[-1]
        holder = scope_ty if len(enum_path) == 1 else self.resolve_type("::".join(enum_path[:-1]), scope_ty, where)
        path = holder.path
        while True:
            enums = self.type_spec(Ty("user", holder.spec, path)).get("enums", {})
            if enum_name in enums:
                for value, name in enums[enum_name].items():
                    label = name["id"] if isinstance(name, dict) else name
                    if label == member:
                        return int(value)
                raise EmitError(f"{where}: enum {enum_name} has no {member!r}")
            if not path:
                raise EmitError(f"{where}: unknown enum {enum_name!r}")
            path = path[:-1]

    def parent_type(self, ty: Ty) -> Ty:
        """The type that uses `ty` as a field, when exactly one type in its spec does."""
        users = [owner for owner, attr in self._all_fields(ty.spec)
                 if self._attr_type(owner, attr).element() == Ty("user", ty.spec, ty.path)]
        return users[0] if len({u for u in users}) == 1 else UNKNOWN

    def _all_fields(self, spec_name: str):
        def walk(path: tuple[str, ...]):
            spec = self.type_spec(Ty("user", spec_name, path))
            owner = Ty("user", spec_name, path)
            for attr in spec.get("seq", []):
                yield owner, attr
            for attr in (spec.get("instances") or {}).values():
                yield owner, attr
            for sub in spec.get("types", {}):
                yield from walk(path + (sub,))
        yield from walk(())

    def _attr_type(self, owner: Ty, attr: dict) -> Ty:
        typ = attr.get("type")
        array = "repeat" in attr
        if typ is None:
            return Ty("bytes" if ("size" in attr or "size-eos" in attr) else "int", array=array)
        if isinstance(typ, dict):
            return Ty("unknown", array=array)
        base = typ.split("(")[0].strip()
        if base in PRIMITIVES or base.rstrip("lbe") in ("u1", "s1", "u2", "s2", "u4", "s4", "u8", "s8"):
            return Ty("int", array=array)
        resolved = self.resolve_type(base, owner, "?")
        return Ty("user", resolved.spec, resolved.path, array=array)

    def field_type(self, ty: Ty, name: str) -> Ty | None:
        spec = self.type_spec(ty)
        for attr in spec.get("seq", []):
            if attr["id"] == name:
                return self._attr_type(ty, attr)
        for param in spec.get("params", []):
            if param["id"] == name:
                return Ty("int")
        instance = (spec.get("instances") or {}).get(name)
        if instance is not None:
            return self._attr_type(ty, instance)
        return None

    def inline(self, ty: Ty, name: str, scope: Scope, where: str) -> str:
        """A value instance, translated where it is used (Kaitai evaluates them lazily)."""
        value = self.type_spec(ty)["instances"][name]["value"]
        src, _ = ExprTranslator(self, value, scope, f"{where} -> {name}").translate()
        return f"({src})"

    def expr(self, text: str | int | bool, scope: Scope, where: str) -> str:
        src, _ = ExprTranslator(self, text, scope, where).translate()
        return src

    # -- emission

    def function_name(self, ty: Ty) -> str:
        return "t_" + "__".join(ty.path) if ty.path else f"t_{ty.spec}"

    def type_call(self, target: Ty, args: list[str], from_spec: str) -> str:
        name = self.function_name(target)
        prefix = "" if target.spec == from_spec else f"{target.spec}_codec."
        return f"{prefix}{name}({', '.join(args)})"

    def attr_construct(self, owner: Ty, attr: dict, where: str) -> str:
        scope = Scope("this", owner)
        endian = self.specs[owner.spec]["meta"].get("endian", "be")
        typ = attr.get("type")
        if isinstance(typ, dict):
            base = self.switch(owner, attr, typ, where)
        elif typ is None:
            base = None
        else:
            base = self.type_ref(owner, typ, endian, where)
        if "contents" in attr:
            contents = attr["contents"]
            data = bytes(contents) if isinstance(contents, list) else str(contents).encode()
            return f"Const({data!r})"
        if "size" in attr:
            size = self.expr(attr["size"], scope, f"{where}.size")
            base = f"Bytes(E({size!r}))" if base is None else (
                base if isinstance(typ, dict) else f"KsSized(E({size!r}), {base})")
        elif attr.get("size-eos"):
            if base is not None:
                raise EmitError(f"{where}: size-eos with a type is not supported")
            base = "GreedyBytes"
        elif base is None:
            raise EmitError(f"{where}: a field needs a type or a size")
        if "repeat" in attr:
            if attr["repeat"] == "expr":
                count = self.expr(attr["repeat-expr"], scope, f"{where}.repeat-expr")
                base = f"KsRepeat({attr['id']!r}, E({count!r}), {base})"
            elif attr["repeat"] == "eos":
                base = f"KsRepeat({attr['id']!r}, None, {base})"
            else:
                raise EmitError(f"{where}: repeat: {attr['repeat']} is not supported")
        return base

    def type_ref(self, owner: Ty, typ: str, endian: str, where: str) -> str:
        match = re.fullmatch(r"\s*([A-Za-z0-9_:]+)\s*(?:\((.*)\))?\s*", typ, re.S)
        if not match:
            raise EmitError(f"{where}: cannot read type {typ!r}")
        name, args = match.group(1), match.group(2)
        if name in ("u1", "s1"):
            return PRIMITIVES[name]
        if name in ("u2", "s2", "u4", "s4", "u8", "s8"):
            return PRIMITIVES[name + endian]
        if name in PRIMITIVES:
            return PRIMITIVES[name]
        if name in ("f4", "f8", "str", "strz", "b1") or name.startswith(("f4", "f8")):
            raise EmitError(f"{where}: type {name} is not supported")
        target = self.resolve_type(name, owner, where)
        params = self.type_spec(target).get("params", [])
        arg_texts = _split_args(args) if args else []
        if len(arg_texts) != len(params):
            raise EmitError(f"{where}: {name} takes {len(params)} arguments")
        # Arguments are evaluated in the caller, which is the new struct's parent context.
        parent = Scope("this['_']", owner)
        sources = [f"E({self.expr(a, parent, f'{where}.type')!r})" for a in arg_texts]
        return self.type_call(target, sources, owner.spec)

    def switch(self, owner: Ty, attr: dict, typ: dict, where: str) -> str:
        endian = self.specs[owner.spec]["meta"].get("endian", "be")
        key = self.expr(typ["switch-on"], Scope("this", owner), f"{where}.switch-on")
        cases, default = [], None
        for case, case_type in typ["cases"].items():
            construct = self.type_ref(owner, case_type, endian, f"{where}.cases")
            if "size" in attr and construct not in PRIMITIVES.values():
                size = self.expr(attr["size"], Scope("this", owner), f"{where}.size")
                construct = f"KsSized(E({size!r}), {construct})"
            if case == "_":
                default = construct
            else:
                cases.append(f"{self.case_key(case, owner, where)}: {construct}")
        if default is None:
            # Kaitai leaves an unmatched unsized switch unset, and keeps a sized one as bytes.
            size = attr.get("size")
            default = "Pass" if size is None else \
                f"Bytes(E({self.expr(size, Scope('this', owner), f'{where}.size')!r}))"
        return f"Switch(E({key!r}), {{{', '.join(cases)}}}, default={default})"

    def case_key(self, case: object, owner: Ty, where: str) -> str:
        if isinstance(case, bool):
            return repr(case)
        if isinstance(case, int):
            return str(case)
        text = str(case)
        if "::" in text:
            return str(self.enum_value(text, owner, where))
        if text in ("true", "false"):
            return "True" if text == "true" else "False"
        return str(int(text, 0))

    def checks(self, owner: Ty, attr: dict, where: str) -> list[str]:
        valid = attr.get("valid")
        if valid is None:
            return []
        value = "_item" if "repeat" in attr else f"this[{attr['id']!r}]"
        scope = Scope("this", owner, underscore=value)
        if not isinstance(valid, dict):
            valid = {"eq": valid}
        tests = []
        for rule, operand in valid.items():
            if rule == "eq":
                tests.append(f"{value} == {self.expr(operand, scope, where)}")
            elif rule == "min":
                tests.append(f"{value} >= {self.expr(operand, scope, where)}")
            elif rule == "max":
                tests.append(f"{value} <= {self.expr(operand, scope, where)}")
            elif rule == "any-of":
                options = ", ".join(self.expr(o, scope, where) for o in operand)
                tests.append(f"{value} in ({options},)")
            elif rule == "expr":
                tests.append(self.expr(operand, scope, where))
            else:
                raise EmitError(f"{where}: valid/{rule} is not supported")
        test = " and ".join(f"({t})" for t in tests)
        if "repeat" in attr:   # Kaitai checks every element
            test = f"all(({test}) for _item in this[{attr['id']!r}])"
        if "if" in attr:
            test = f"{value} is None or ({test})"
        return [f"Check(E({test!r}))"]

    def checksum_spans(self, seq: list[dict], where: str) -> dict[str, list[str]]:
        """field id -> the `Tell` marks to place before it: `_<checksum>_start` before the first
        field a `-checksum` covers, `_<checksum>_end` before the field after the last."""
        ids = [a["id"] for a in seq]
        marks: dict[str, list[str]] = {}
        for attr in seq:
            spec = attr.get("-checksum")
            if spec is None:
                continue
            over, name = list(spec.get("over", [])), attr["id"]
            if spec.get("algorithm") not in ("crc32",):
                raise EmitError(f"{where}/seq/{name}: -checksum algorithm "
                                f"{spec.get('algorithm')!r} is not supported")
            if not over or any(o not in ids for o in over) \
                    or ids[ids.index(over[0]):ids.index(over[0]) + len(over)] != over:
                raise EmitError(f"{where}/seq/{name}: -checksum must cover consecutive seq fields")
            after = ids.index(over[-1]) + 1
            marks.setdefault(over[0], []).append(f"_{name}_start")
            marks.setdefault(ids[after], []).append(f"_{name}_end")
        return marks

    def struct(self, ty: Ty) -> str:
        spec = self.type_spec(ty)
        where = f"formats/{ty.spec}.ksy:/{'/'.join(('types',) + ty.path) if ty.path else ''}"
        members: list[str] = []
        params = spec.get("params", [])
        for param in params:
            members.append(f"{param['id']!r} / Computed({param['id']})")
        covered = self.checksum_spans(spec.get("seq", []), where)
        for attr in spec.get("seq", []):
            fwhere = f"{where}/seq/{attr['id']}"
            members.extend(f"{tell!r} / Tell" for tell in covered.get(attr["id"], []))
            construct = self.attr_construct(ty, attr, fwhere)
            if "-checksum" in attr:
                algorithm, name = attr["-checksum"]["algorithm"], attr["id"]
                span = f"KsSpan({f'_{name}_start'!r}, {f'_{name}_end'!r})"
                construct = f"Checksum({construct}, CHECKSUMS[{algorithm!r}], {span})"
            if "if" in attr:
                cond = self.expr(attr["if"], Scope("this", ty), f"{fwhere}.if")
                kind = "KsIfStream" if re.search(r"\b_io\b", str(attr["if"])) else "If"   # asks the stream
                construct = f"{kind}(E({cond!r}), {construct})"
            members.append(f"{attr['id']!r} / {construct}")
            members.extend(self.checks(ty, attr, fwhere))
        trailers = []
        for name, inst in (spec.get("instances") or {}).items():
            if "value" in inst:
                continue
            iwhere = f"{where}/instances/{name}"
            if "pos" not in inst:
                raise EmitError(f"{iwhere}: an instance needs pos or value")
            construct = self.attr_construct(ty, {**inst, "id": name}, iwhere)
            pos = self.expr(inst["pos"], Scope("this", ty), f"{iwhere}.pos")
            cond = ""
            if "if" in inst:
                cond = f", E({self.expr(inst['if'], Scope('this', ty), f'{iwhere}.if')!r})"
            if "io" in inst:
                stream = self.expr(inst["io"], Scope("this", ty), f"{iwhere}.io")
                cond += f", io=E({stream!r})"
            if re.fullmatch(r"\s*_io\.size\s*-\s*\d+\s*", str(inst["pos"])) and "if" not in inst \
                    and "io" not in inst:    # a trailer (footer): built at the end, once the body is
                cond += ", trailer=True"
                trailers.append(f"KsTrailer({name!r}, {construct})")
            members.append(f"{name!r} / KsInstance({name!r}, E({pos!r}), {construct}{cond})")
        members.extend(trailers)
        args = ", ".join(p["id"] for p in params)
        body = "".join(f"        {m},\n" for m in members)
        doc = (spec.get("doc") or "").strip().splitlines()
        summary = doc[0].replace('"""', "'''") if doc else ""
        return (f"def {self.function_name(ty)}({args}) -> Struct:\n"
                f"    \"\"\"{summary}\"\"\"\n"
                f"    return Struct(\n{body}    )\n")

    def module(self, name: str) -> str:
        spec = self.specs[name]
        imports = spec["meta"].get("imports", [])
        out = ["from construct import *  # noqa: F401,F403",
               "",
               "from paimon_schema.runtime.constructs import CHECKSUMS, KsExpr as E, KsInstance, KsRepeat, "
               "KsIfStream, KsSized, KsSpan  # noqa: F401"]
        out += [f"from paimon_schema.generated import {i}_codec" for i in imports]
        out.append("")

        def walk(path: tuple[str, ...]) -> None:
            ty = Ty("user", name, path)
            out.append("")
            out.append(self.struct(ty))
            for sub in self.type_spec(ty).get("types", {}):
                walk(path + (sub,))

        walk(())
        root = Ty("user", name, ())
        if any("KsTrailer(" in line for line in out):     # a footer at the end: few specs have one
            out.insert(3, "from paimon_schema.runtime.constructs import KsTrailer")
        if not spec.get("params"):
            out.append(f"\n#: The whole layout (interpreted; `.compile()` it for speed).\n"
                       f"{name} = {self.function_name(root)}()\n")
        return "\n".join(out).rstrip() + "\n"


def _split_args(text: str) -> list[str]:
    args, depth, current = [], 0, ""
    for ch in text:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            args.append(current.strip())
            current = ""
        else:
            current += ch
    if current.strip():
        args.append(current.strip())
    return args


def emit_all(specs: dict[str, dict]) -> dict[str, str]:
    """{module file name: source} for every spec."""
    emitter = Emitter(specs)
    return {f"{name}_codec.py": emitter.module(name) for name in specs}
