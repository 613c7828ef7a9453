"""Plugin and action arguments with Go's type rules (``framework/arguments.go``).

Volcano reads arguments from ``map[string]interface{}`` decoded by yaml.v2: ``GetInt``
accepts only integers (``1.0`` is refused with a warning and the default kept),
``GetFloat64`` accepts floats and integers, ``GetBool`` only booleans. Python's ``bool``
is an ``int``, so booleans are excluded explicitly.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from vspec.framework.log import Klog


class Arguments(Mapping[str, Any]):
    def __init__(self, raw: Mapping[str, Any] | None, log: Klog) -> None:
        self._raw = dict(raw or {})
        self._log = log

    def __getitem__(self, key: str) -> Any:
        return self._raw[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._raw)

    def __len__(self) -> int:
        return len(self._raw)

    def _warn(self, value: Any, key: str, kind: str) -> None:
        self._log.warning(f"Could not parse argument: {value} for key {key} to {kind}")

    def get_int(self, key: str, default: int) -> int:
        if key not in self._raw:
            return default
        value = self._raw[key]
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        self._warn(value, key, "int")
        return default

    def get_float(self, key: str, default: float) -> float:
        if key not in self._raw:
            return default
        value = self._raw[key]
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        self._warn(value, key, "float64")
        return default

    def get_bool(self, key: str, default: bool) -> bool:
        if key not in self._raw:
            return default
        value = self._raw[key]
        if isinstance(value, bool):
            return value
        self._warn(value, key, "bool")
        return default

    def get_str(self, key: str, default: str) -> str:
        value = self._raw.get(key, default)
        return value if isinstance(value, str) else default
