"""Simulation: a small evaluator of DynamoDB expressions (conditions, key conditions, updates) for
the fake client (``dynamo``), over values in DynamoDB JSON (``{"N": "3"}``). It takes exactly
the grammar in ``shared/domain/RULINGS.md``, Design notes, "Simulation", and raises
``UnsupportedExpressionError`` on anything else: the fake never silently accepts what DynamoDB
would refuse or evaluate differently.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

AV = dict[str, Any]


class UnsupportedExpressionError(Exception):
    """An expression (or parameter) the fake does not model: fix the fake, never ignore it."""


_TOKEN = re.compile(
    r"\s*(?:(?P<op><>|<=|>=|=|<|>|\(|\)|,|\+|-)|(?P<name>#[A-Za-z0-9_]+)|"
    r"(?P<value>:[A-Za-z0-9_]+)|(?P<word>[A-Za-z_][A-Za-z0-9_]*))"
)
_KEYWORDS = {"AND", "OR", "NOT", "BETWEEN", "IN", "SET", "ADD", "REMOVE", "DELETE"}
_FUNCTIONS = {"attribute_exists", "attribute_not_exists", "begins_with", "if_not_exists"}


def tokens(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    text = text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            raise UnsupportedExpressionError(f"cannot read {text[pos:]!r} in {text!r}")
        pos = m.end()
        kind = m.lastgroup or ""
        tok = m.group(kind)
        if kind == "word":
            if tok.upper() in _KEYWORDS:
                kind, tok = "kw", tok.upper()
            elif tok in _FUNCTIONS:
                kind = "fn"
            elif tok.lower() in {"size", "contains", "attribute_type", "list_append"}:
                raise UnsupportedExpressionError(f"function {tok} is not modelled ({text!r})")
        out.append((kind, tok))
    return out


class _Parser:
    def __init__(self, text: str, names: dict[str, str] | None, values: dict[str, AV] | None):
        self.text = text
        self.toks = tokens(text)
        self.i = 0
        self.names = names or {}
        self.values = values or {}
        self.used_names: set[str] = set()
        self.used_values: set[str] = set()

    def peek(self) -> tuple[str, str] | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self, kind: str | None = None, tok: str | None = None) -> tuple[str, str]:
        t = self.peek()
        if t is None or (kind and t[0] != kind) or (tok and t[1] != tok):
            raise UnsupportedExpressionError(
                f"expected {tok or kind} at token {self.i} of {self.text!r}"
            )
        self.i += 1
        return t

    def at(self, kind: str, tok: str | None = None) -> bool:
        t = self.peek()
        return t is not None and t[0] == kind and (tok is None or t[1] == tok)

    def done(self) -> None:
        if self.i != len(self.toks):
            raise UnsupportedExpressionError(f"trailing tokens in {self.text!r}")

    # operands -> ("path", name) | ("value", AV)
    def path(self) -> str:
        kind, tok = self.take()
        if kind == "name":
            if tok not in self.names:
                raise UnsupportedExpressionError(f"{tok} not in ExpressionAttributeNames")
            self.used_names.add(tok)
            return self.names[tok]
        if kind == "word":
            return tok
        raise UnsupportedExpressionError(f"expected an attribute name in {self.text!r}")

    def operand(self) -> tuple[str, Any]:
        if self.at("value"):
            _, tok = self.take()
            if tok not in self.values:
                raise UnsupportedExpressionError(f"{tok} not in ExpressionAttributeValues")
            self.used_values.add(tok)
            return ("value", self.values[tok])
        return ("path", self.path())


# ---------------------------------------------------------------------------- comparisons
def _typed(av: AV) -> tuple[str, Any]:
    (kind, v), *_ = av.items()
    if kind == "N":
        return kind, Decimal(v)
    if kind == "S":
        return kind, v.encode("utf-8")
    if kind == "B":
        return kind, bytes(v)
    if kind == "BOOL":
        return kind, bool(v)
    if kind == "NULL":
        return kind, None
    return kind, repr(v)


def compare(op: str, a: AV | None, b: AV | None) -> bool:
    if a is None or b is None:
        return op == "<>"
    ka, va = _typed(a)
    kb, vb = _typed(b)
    if ka != kb:
        return op == "<>"
    if op == "=":
        return bool(va == vb)
    if op == "<>":
        return bool(va != vb)
    if ka not in ("N", "S", "B"):
        raise UnsupportedExpressionError(f"ordering of {ka} values")
    return bool({"<": va < vb, "<=": va <= vb, ">": va > vb, ">=": va >= vb}[op])


def _begins(a: AV | None, b: AV | None) -> bool:
    if a is None or b is None:
        return False
    ka, va = _typed(a)
    kb, vb = _typed(b)
    if ka != kb or ka not in ("S", "B"):
        return False
    return bool(va.startswith(vb))


# ---------------------------------------------------------------------------- conditions
class Condition:
    """A parsed ``ConditionExpression``; ``holds(item)`` on an AV item (None: absent)."""

    def __init__(self, text: str, names: dict[str, str] | None, values: dict[str, AV] | None):
        p = _Parser(text, names, values)
        self.tree = self._or(p)
        p.done()
        self.parser = p

    def _or(self, p: _Parser) -> Any:
        node = self._and(p)
        while p.at("kw", "OR"):
            p.take()
            node = ("or", node, self._and(p))
        return node

    def _and(self, p: _Parser) -> Any:
        node = self._not(p)
        while p.at("kw", "AND"):
            p.take()
            node = ("and", node, self._not(p))
        return node

    def _not(self, p: _Parser) -> Any:
        if p.at("kw", "NOT"):
            p.take()
            return ("not", self._not(p))
        return self._atom(p)

    def _atom(self, p: _Parser) -> Any:
        if p.at("op", "("):
            p.take()
            node = self._or(p)
            p.take("op", ")")
            return node
        if p.at("fn"):
            _, fn = p.take()
            p.take("op", "(")
            if fn in ("attribute_exists", "attribute_not_exists"):
                name = p.path()
                p.take("op", ")")
                return (fn, name)
            if fn == "begins_with":
                a = p.operand()
                p.take("op", ",")
                b = p.operand()
                p.take("op", ")")
                return ("begins_with", a, b)
            raise UnsupportedExpressionError(f"{fn} in a condition")
        a = p.operand()
        if p.at("kw", "BETWEEN"):
            p.take()
            lo = p.operand()
            p.take("kw", "AND")
            hi = p.operand()
            return ("between", a, lo, hi)
        if p.at("kw", "IN"):
            raise UnsupportedExpressionError("IN is not modelled")
        _, op = p.take("op")
        if op not in ("=", "<>", "<", "<=", ">", ">="):
            raise UnsupportedExpressionError(f"operator {op}")
        return ("cmp", op, a, p.operand())

    @staticmethod
    def _val(operand: tuple[str, Any], item: dict[str, AV] | None) -> AV | None:
        kind, v = operand
        if kind == "value":
            return v  # type: ignore[no-any-return]
        return None if item is None else item.get(v)

    def holds(self, item: dict[str, AV] | None) -> bool:
        return self._eval(self.tree, item)

    def _eval(self, node: Any, item: dict[str, AV] | None) -> bool:
        tag = node[0]
        if tag == "or":
            return self._eval(node[1], item) or self._eval(node[2], item)
        if tag == "and":
            return self._eval(node[1], item) and self._eval(node[2], item)
        if tag == "not":
            return not self._eval(node[1], item)
        if tag == "attribute_exists":
            return item is not None and node[1] in item
        if tag == "attribute_not_exists":
            return item is None or node[1] not in item
        if tag == "begins_with":
            return _begins(self._val(node[1], item), self._val(node[2], item))
        if tag == "between":
            v = self._val(node[1], item)
            return compare(">=", v, self._val(node[2], item)) and compare(
                "<=", v, self._val(node[3], item)
            )
        if tag == "cmp":
            return compare(node[1], self._val(node[2], item), self._val(node[3], item))
        raise UnsupportedExpressionError(str(tag))


# ---------------------------------------------------------------------------- key conditions
class KeyCondition:
    """A parsed ``KeyConditionExpression`` on ``(hash_name, range_name)``: ``hash_value`` (AV)
    and ``matches(range_av)``."""

    def __init__(
        self,
        text: str,
        names: dict[str, str] | None,
        values: dict[str, AV] | None,
        hash_name: str,
        range_name: str | None,
    ):
        p = _Parser(text, names, values)
        self.hash_value = self._hash(p, hash_name)
        self.range: Any = None
        if p.at("kw", "AND"):
            p.take()
            self.range = self._range(p, range_name)
        p.done()
        self.parser = p

    @staticmethod
    def _hash(p: _Parser, hash_name: str) -> AV:
        name = p.path()
        if name != hash_name:
            raise UnsupportedExpressionError(f"key condition on {name}, the key is {hash_name}")
        p.take("op", "=")
        kind, v = p.operand()
        if kind != "value":
            raise UnsupportedExpressionError("the hash key must equal a value")
        return v  # type: ignore[no-any-return]

    @staticmethod
    def _range(p: _Parser, range_name: str | None) -> Any:
        if p.at("fn", "begins_with"):
            p.take()
            p.take("op", "(")
            name = p.path()
            p.take("op", ",")
            kind, v = p.operand()
            p.take("op", ")")
            if name != range_name or kind != "value":
                raise UnsupportedExpressionError("begins_with on the sort key and a value only")
            return ("begins_with", v)
        name = p.path()
        if name != range_name:
            raise UnsupportedExpressionError(
                f"key condition on {name}, the sort key is {range_name}"
            )
        if p.at("kw", "BETWEEN"):
            p.take()
            lo = p.operand()
            p.take("kw", "AND")
            hi = p.operand()
            if lo[0] != "value" or hi[0] != "value":
                raise UnsupportedExpressionError("BETWEEN needs values")
            return ("between", lo[1], hi[1])
        _, op = p.take("op")
        if op not in ("=", "<", "<=", ">", ">="):
            raise UnsupportedExpressionError(f"sort key operator {op}")
        kind, v = p.operand()
        if kind != "value":
            raise UnsupportedExpressionError("the sort key must be compared with a value")
        return ("cmp", op, v)

    def matches(self, range_av: AV | None) -> bool:
        r = self.range
        if r is None:
            return True
        if r[0] == "begins_with":
            return _begins(range_av, r[1])
        if r[0] == "between":
            return compare(">=", range_av, r[1]) and compare("<=", range_av, r[2])
        return compare(r[1], range_av, r[2])


# ---------------------------------------------------------------------------- updates
class Update:
    """A parsed ``UpdateExpression``; ``apply(item)`` returns the new AV item."""

    def __init__(self, text: str, names: dict[str, str] | None, values: dict[str, AV] | None):
        p = _Parser(text, names, values)
        self.sets: list[tuple[str, Any]] = []
        self.adds: list[tuple[str, AV]] = []
        self.removes: list[str] = []
        seen: set[str] = set()
        while p.peek() is not None:
            _, clause = p.take("kw")
            if clause in seen or clause not in ("SET", "ADD", "REMOVE"):
                raise UnsupportedExpressionError(f"clause {clause} in {text!r}")
            seen.add(clause)
            while True:
                if clause == "SET":
                    name = p.path()
                    p.take("op", "=")
                    self.sets.append((name, self._set_value(p)))
                elif clause == "ADD":
                    name = p.path()
                    kind, v = p.operand()
                    if kind != "value" or "N" not in v:
                        raise UnsupportedExpressionError("ADD of a number value only")
                    self.adds.append((name, v))
                else:
                    self.removes.append(p.path())
                if p.at("op", ","):
                    p.take()
                    continue
                break
        self.parser = p

    def _set_value(self, p: _Parser) -> Any:
        left = self._set_operand(p)
        if p.at("op", "+") or p.at("op", "-"):
            _, op = p.take()
            return (op, left, self._set_operand(p))
        return left

    @staticmethod
    def _set_operand(p: _Parser) -> Any:
        if p.at("fn", "if_not_exists"):
            p.take()
            p.take("op", "(")
            name = p.path()
            p.take("op", ",")
            default = p.operand()
            p.take("op", ")")
            return ("if_not_exists", name, default)
        return p.operand()

    @staticmethod
    def _resolve(node: Any, item: dict[str, AV]) -> AV:
        tag = node[0]
        if tag == "value":
            return node[1]  # type: ignore[no-any-return]
        if tag == "path":
            if node[1] not in item:
                raise UnsupportedExpressionError(
                    f"SET from missing attribute {node[1]} (a ValidationException)"
                )
            return item[node[1]]
        if tag == "if_not_exists":
            return item[node[1]] if node[1] in item else Update._resolve(node[2], item)
        if tag in ("+", "-"):
            a = Update._resolve(node[1], item)
            b = Update._resolve(node[2], item)
            if "N" not in a or "N" not in b:
                raise UnsupportedExpressionError("arithmetic on non-numbers")
            x, y = Decimal(a["N"]), Decimal(b["N"])
            return {"N": str(x + y if tag == "+" else x - y)}
        raise UnsupportedExpressionError(str(tag))

    def apply(self, item: dict[str, AV]) -> dict[str, AV]:
        new = dict(item)
        for name, node in self.sets:
            new[name] = self._resolve(node, item)
        for name, v in self.adds:
            old = item.get(name)
            if old is not None and "N" not in old:
                raise UnsupportedExpressionError(f"ADD to a non-number {name}")
            base = Decimal(old["N"]) if old else Decimal(0)
            new[name] = {"N": str(base + Decimal(v["N"]))}
        for name in self.removes:
            new.pop(name, None)
        return new


def condition(text: str | None, names: Any, values: Any) -> Condition | None:
    """Parse a ``ConditionExpression`` (None: no condition)."""
    return None if text is None else Condition(text, names, values)


def check_all_used(names: Any, values: Any, *parsed: Any) -> None:
    """DynamoDB refuses a request with an unused ExpressionAttributeNames/Values entry
    (ValidationException): so does the fake."""
    used_names: set[str] = set()
    used_values: set[str] = set()
    for e in parsed:
        if e is not None:
            used_names |= e.parser.used_names
            used_values |= e.parser.used_values
    extra = (set(names or {}) - used_names) | (set(values or {}) - used_values)
    if extra:
        raise UnsupportedExpressionError(f"unused expression attributes {sorted(extra)}")
