"""Reading a YAML file that must hold a mapping: every way a file can be wrong is one line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from mlcompare.config.fields import type_name
from mlcompare.errors import InputError

#: libyaml's safe loader where PyYAML was built with it (ten times faster: the pairing files read
#: at every start), else PyYAML's own; both construct only plain YAML types, never a tag's object.
_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_yaml_mapping(path: Path, source: str | None = None) -> dict[str, Any]:
    """Read a YAML file that must hold a mapping (never executes tags: a safe loader)."""
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
        data = yaml.load(text, Loader=_SAFE_LOADER)  # noqa: S506 - a safe loader
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
