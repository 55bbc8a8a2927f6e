"""Small checks shared by the experiment and pairing loaders.

Each check either returns the value, normalised, or raises an InputError that names the
file and the dotted path of the field, so every loader reports errors the same way.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from mlcompare.errors import InputError


def load_yaml_mapping(path: Path, source: str | None = None) -> dict[str, Any]:
    """Read a YAML file that must hold a mapping (never executes tags: safe_load)."""
    source = source or str(path)
    try:
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


def expect_mapping(source: str, field: str, value: Any) -> dict:
    if not isinstance(value, dict):
        raise InputError(source, field, f"expected a mapping, got {type_name(value)}")
    return value


def expect_int(source: str, field: str, value: Any, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise InputError(source, field, f"expected an integer >= {minimum}, got {value!r}")
    return value


def expect_bool(source: str, field: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise InputError(source, field, f"expected true or false, got {value!r}")
    return value


def expect_number(source: str, field: str, value: Any, low: float, high: float | None = None) -> float:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    if ok and value == value and value >= low and (high is None or value <= high):
        return float(value)
    bound = f"between {low} and {high}" if high is not None else f">= {low}"
    raise InputError(source, field, f"expected a number {bound}, got {value!r}")


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
        raise InputError(source, field, f"expected one of {', '.join(choices)}, got {value!r}")
    return value
