"""``-k`` expressions: pytest's keyword grammar, so ``vspec run -k`` selects as ``pytest -k`` does.

An expression combines words with ``and``, ``or``, ``not`` and parentheses; a word matches
a spec when it is a case-insensitive substring of one of the spec's keywords (its name, its
tags and the parts of its file path). Words may hold any character but whitespace and
parentheses, so tags such as ``volcano-v1.11.0`` can be named as they are written.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import NoReturn

from vspec.errors import VspecError

Matcher = Callable[[list[str]], bool]

_TOKEN = re.compile(r"\s*(\(|\)|[^\s()]+)")
_OPERATORS = frozenset({"and", "or", "not"})


class KeywordError(VspecError):
    """The ``-k`` expression does not parse: a command-line error (exit 2)."""


def compile_keyword(expression: str) -> Callable[[Iterable[str]], bool]:
    """Compile ``expression`` into a predicate over a spec's keywords; blank selects all."""
    tokens = _TOKEN.findall(expression)
    if not tokens:
        return lambda _keywords: True
    parser = _Parser(expression, tokens)
    matcher = parser.parse()

    def select(keywords: Iterable[str]) -> bool:
        return matcher([k.lower() for k in keywords])

    return select


class _Parser:
    """Recursive descent: ``or`` binds loosest, then ``and``, then ``not``."""

    def __init__(self, expression: str, tokens: list[str]) -> None:
        self.expression = expression
        self.tokens = tokens
        self.pos = 0

    def parse(self) -> Matcher:
        matcher = self._or()
        if self.pos < len(self.tokens):
            self._fail(f"unexpected {self.tokens[self.pos]!r}")
        return matcher

    def _peek(self) -> str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def _take(self) -> str:
        token = self._peek()
        if token is None:
            self._fail("unexpected end of expression")
        self.pos += 1
        return token

    def _or(self) -> Matcher:
        left = self._and()
        while self._peek() == "or":
            self.pos += 1
            right = self._and()
            left = _either(left, right)
        return left

    def _and(self) -> Matcher:
        left = self._not()
        while self._peek() == "and":
            self.pos += 1
            right = self._not()
            left = _both(left, right)
        return left

    def _not(self) -> Matcher:
        token = self._take()
        if token == "not":
            inner = self._not()
            return lambda keywords: not inner(keywords)
        if token == "(":
            inner = self._or()
            if self._take() != ")":
                self._fail("expected ')'")
            return inner
        if token == ")" or token in _OPERATORS:
            self._fail(f"unexpected {token!r}")
        word = token.lower()
        return lambda keywords: any(word in k for k in keywords)

    def _fail(self, problem: str) -> NoReturn:
        raise KeywordError(f"-k {self.expression!r}: {problem}")


def _either(left: Matcher, right: Matcher) -> Matcher:
    return lambda keywords: left(keywords) or right(keywords)


def _both(left: Matcher, right: Matcher) -> Matcher:
    return lambda keywords: left(keywords) and right(keywords)
