"""Small checks shared by the experiment and pairing loaders.

Each check either returns the value, normalised, or raises an InputError that names the
file and the dotted path of the field, so every loader reports errors the same way.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import yaml

from mlcompare.errors import InputError


def load_yaml_mapping(path: Path, source: str | None = None) -> dict[str, Any]:
    """Read a YAML file that must hold a mapping (never executes tags: safe_load)."""
    source = source or str(path)
    try:
        if path.exists() and not path.is_dir() and not path.is_file():
            # a FIFO or a device such as /dev/zero would block or never end
            raise InputError(source, None, "is not a regular file, expected a YAML file")
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(source, None, "no such file") from None
    except IsADirectoryError:
        raise InputError(source, None, "is a directory, expected a YAML file") from None
    except UnicodeDecodeError:
        raise InputError(source, None, "is not UTF-8 text") from None
    except OSError as exc:
        raise InputError(source, None, f"cannot be read ({exc.strerror})") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or "invalid syntax"
        raise InputError(source, None, f"not valid YAML{where}: {problem}") from None
    if data is None:
        raise InputError(source, None, "is empty, expected a YAML mapping")
    if not isinstance(data, dict):
        raise InputError(source, None, f"expected a YAML mapping at the top, got {type_name(data)}")
    return data


def type_name(value: Any) -> str:
    return {
        bool: "a boolean", int: "an integer", float: "a number", str: "a string",
        list: "a list", dict: "a mapping", type(None): "nothing (null)",
    }.get(type(value), type(value).__name__)


def check_keys(source: str, field: str, data: dict, allowed: set[str], required: set[str] = frozenset()) -> None:
    for key in data:
        if not isinstance(key, str):
            raise InputError(source, join(field, str(key)), "keys must be strings")
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise InputError(source, join(field, unknown[0]),
                         f"unknown key (allowed: {', '.join(sorted(allowed))})")
    for key in sorted(required):
        if key not in data:
            raise InputError(source, join(field, key), "missing (required)")


def join(field: str, key: str) -> str:
    return f"{field}.{key}" if field else key


def expect_str(source: str, field: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InputError(source, field, f"expected a non-empty string, got {type_name(value)}")
    return value


def expect_text(source: str, field: str, value: Any) -> str:
    """Free text such as a description: any string, empty included."""
    if not isinstance(value, str):
        raise InputError(source, field, f"expected a string, got {type_name(value)}")
    return value


def expect_name(source: str, field: str, value: Any, limit: int = 100) -> str:
    """A name that ends up in run names and MLflow params: one printable line, not too long."""
    value = expect_str(source, field, value)
    if not value.isprintable() or len(value) > limit:
        raise InputError(source, field, f"expected a name of at most {limit} printable characters on one "
                         f"line, got {_short_repr(value)}")
    return value


def expect_identifier(source: str, field: str, value: Any) -> str:
    """A keyword-argument name (becomes an MLflow param key, which allows few characters)."""
    if not isinstance(value, str) or not _IDENTIFIER.fullmatch(value):
        raise InputError(source, field, f"expected a parameter name (letters, digits, underscores; "
                         f"at most 100), got {_short_repr(value)}")
    return value


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,99}")


def expect_mapping(source: str, field: str, value: Any) -> dict:
    if not isinstance(value, dict):
        raise InputError(source, field, f"expected a mapping, got {type_name(value)}")
    return value


def expect_int(source: str, field: str, value: Any, minimum: int = 1, maximum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise InputError(source, field, f"expected an integer >= {minimum}, got {_short_repr(value)}")
    if maximum is not None and value > maximum:
        raise InputError(source, field, f"expected an integer <= {maximum}, got {_short_repr(value)}")
    return value


def expect_bool(source: str, field: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise InputError(source, field, f"expected true or false, got {value!r}")
    return value


def expect_number(source: str, field: str, value: Any, low: float, high: float | None = None) -> float:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    if ok and _finite(value) and value >= low and (high is None or value <= high):
        return float(value)
    bound = f"between {low} and {high}" if high is not None else f">= {low}"
    raise InputError(source, field, f"expected a finite number {bound}, got {_short_repr(value)}")


def _finite(value: int | float) -> bool:
    try:
        return math.isfinite(value)
    except OverflowError:  # an integer too large for a float
        return False


def expect_plain(source: str, field: str, value: Any, _open: frozenset[int] = frozenset()) -> Any:
    """A value that JSON can carry unchanged: null, boolean, finite number, string, list, mapping.

    Estimator parameters travel to the worker as JSON and into run params as text; YAML's
    dates, binary, sets, non-string keys and self-references (`&a [*a]`) would break that
    far from the file.
    """
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, float)):
        if not _finite(value):
            raise InputError(source, field, f"expected a finite number, got {_short_repr(value)}")
        return value
    if isinstance(value, (list, dict)):
        if id(value) in _open:
            raise InputError(source, field, "contains itself (a YAML alias of its own anchor)")
        inner = _open | {id(value)}
        items = value.items() if isinstance(value, dict) else ((f"[{i}]", v) for i, v in enumerate(value))
        for key, item in items:
            if not isinstance(key, str):
                raise InputError(source, join(field, str(key)), "keys must be strings")
            expect_plain(source, field + key if isinstance(value, list) else join(field, key), item, inner)
        return value
    raise InputError(source, field, "expected a plain value (number, string, boolean, null, list or "
                     f"mapping), got {type_name(value)}")


def _short_repr(value: Any, limit: int = 60) -> str:
    """repr for one-line messages: long or multi-line values are cut."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def expect_int_or_list(source: str, field: str, value: Any, minimum: int = 1) -> list[int]:
    """An integer or a non-empty list of integers: the sweep axes of a dataset."""
    values = value if isinstance(value, list) else [value]
    if not values:
        raise InputError(source, field, "expected an integer or a non-empty list of integers, got an empty list")
    for i, item in enumerate(values):
        expect_int(source, f"{field}[{i}]" if isinstance(value, list) else field, item, minimum)
    return list(values)


def expect_str_list(source: str, field: str, value: Any) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value:
        raise InputError(source, field, f"expected a non-empty list of names, got {type_name(value)}")
    for i, item in enumerate(value):
        expect_str(source, f"{field}[{i}]", item)
    if len(set(value)) != len(value):
        raise InputError(source, field, "lists a name twice")
    return value


def expect_choice(source: str, field: str, value: Any, choices: list[str]) -> str:
    if value not in choices:
        raise InputError(source, field, f"expected one of {', '.join(choices)}, got {_short_repr(value)}")
    return value
