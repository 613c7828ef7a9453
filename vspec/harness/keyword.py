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
MAX_TOKENS = 2_000  # words, operators and parentheses of one expression
MAX_DEPTH = 50  # nested parentheses and nots


class KeywordError(VspecError):
    """The ``-k`` expression does not parse: a command-line error (exit 2)."""


def compile_keyword(expression: str) -> Callable[[Iterable[str]], bool]:
    """Compile ``expression`` into a predicate over a spec's keywords; blank selects all."""
    tokens = _TOKEN.findall(expression)
    if not tokens:
        return lambda _keywords: True
    if len(tokens) > MAX_TOKENS:
        raise KeywordError(
            f"-k {_shown(expression)}: {len(tokens)} words and operators; "
            f"at most {MAX_TOKENS} are read"
        )
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
        self.depth = 0

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
        terms = [self._and()]
        while self._peek() == "or":
            self.pos += 1
            terms.append(self._and())
        return _either(terms)

    def _and(self) -> Matcher:
        terms = [self._not()]
        while self._peek() == "and":
            self.pos += 1
            terms.append(self._not())
        return _both(terms)

    def _not(self) -> Matcher:
        token = self._take()
        if token in ("not", "("):
            self.depth += 1
            if self.depth > MAX_DEPTH:
                self._fail(f"nested deeper than {MAX_DEPTH} levels")
        if token == "not":
            inner = self._not()
            self.depth -= 1
            return lambda keywords: not inner(keywords)
        if token == "(":
            inner = self._or()
            if self._take() != ")":
                self._fail("expected ')'")
            self.depth -= 1
            return inner
        if token == ")" or token in _OPERATORS:
            self._fail(f"unexpected {token!r}")
        word = token.lower()
        return lambda keywords: any(word in k for k in keywords)

    def _fail(self, problem: str) -> NoReturn:
        raise KeywordError(f"-k {_shown(self.expression)}: {problem}")


def _either(terms: list[Matcher]) -> Matcher:
    """One matcher for a whole chain, so a long chain does not nest calls."""
    if len(terms) == 1:
        return terms[0]
    return lambda keywords: any(term(keywords) for term in terms)


def _both(terms: list[Matcher]) -> Matcher:
    if len(terms) == 1:
        return terms[0]
    return lambda keywords: all(term(keywords) for term in terms)


def _shown(expression: str, limit: int = 80) -> str:
    """The expression as an error quotes it, shortened: it may be thousands of words."""
    return repr(expression if len(expression) <= limit else expression[:limit] + "...")
