"""The validation layer under every file mlcompare reads: field types, the base model, one translator.

Experiment files, pairing files and dataset cards are pydantic models built from the
annotated types here. Each type checks its value itself (a `BeforeValidator`) and fails
with the one sentence a user sees, so the models keep real JSON Schema types while the
messages stay ours. `validate` turns the first failure into an `InputError` naming the
file and the dotted field (`datasets[0].n_samples[1]`).
"""

from __future__ import annotations

import difflib
import math
import re
from dataclasses import dataclass
from typing import Annotated, Any, Callable, Literal, NoReturn, cast, get_args

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    WrapValidator,
    model_validator,
)
from pydantic.config import JsonDict
from pydantic_core import ErrorDetails, InitErrorDetails, PydanticCustomError

from mlcompare.errors import InputError, raise_all

#: The pydantic error type of every failure raised with `fail`; its ctx carries the message
#: and the part of the field path below the failing value ("[1]", ".rename.alpha").
_ERROR = "mlcompare"


def fail(message: str, at: str = "") -> NoReturn:
    """Fail validation with `message`, at the sub-field `at` of the value being checked: a suffix
    of the field path such as "[1]" or ".rename.alpha" ("" for the value itself)."""
    raise PydanticCustomError(_ERROR, "{message}", {"at": at, "message": message})


def join(field: str, key: str) -> str:
    """The field `key` inside `field` ("" for the top of a file)."""
    return f"{field}.{key}" if field else key


def _path(field: str, suffix: str) -> str:
    """`field` followed by a suffix from `fail` ("a" + ".b" is "a.b"; "" + ".b" is "b")."""
    path = field + suffix
    return path[1:] if path.startswith(".") else path


def type_name(value: Any) -> str:
    return {
        bool: "a boolean", int: "an integer", float: "a number", str: "a string",
        list: "a list", dict: "a mapping", type(None): "nothing (null)",
    }.get(type(value), type(value).__name__)


def short_repr(value: Any, limit: int = 60) -> str:
    """repr for one-line messages: long or multi-line values are cut."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def finite(value: int | float) -> bool:
    try:
        return math.isfinite(value)
    except OverflowError:  # an integer too large for a float
        return False


# -- turning a pydantic error into ours ---------------------------------------------------------

def _dotted(loc: tuple[str | int, ...]) -> str:
    """A pydantic location as a field-path suffix: ("datasets", 0, "seed") is ".datasets[0].seed"."""
    return "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc)


def _located(error: ErrorDetails) -> tuple[str, str]:
    """(field-path suffix, message) of one pydantic error: ours carry both in ctx; an unknown
    key carries its message in the value `Strict` put there; pydantic's own keep their text."""
    if error["type"] == _ERROR:
        return _dotted(error["loc"]) + error["ctx"]["at"], error["ctx"]["message"]
    if error["type"] == "extra_forbidden" and isinstance(error.get("input"), _UnknownKey):
        return _dotted(error["loc"]), error["input"].message
    if error["type"] == "missing":
        return _dotted(error["loc"]), "missing (required)"
    return _dotted(error["loc"]), error["msg"]


@dataclass(frozen=True)
class _UnknownKey:
    """Put by `Strict` in place of an unknown key's value: pydantic refuses the key beside
    every other mistake of the file, and the refusal carries this message."""

    message: str


def validate(target: Any, data: Any, source: str, at: str = "", context: dict[str, Any] | None = None) -> Any:
    """Validate `data` as `target` (a model class or an annotated type); raise the first error as an
    `InputError(source, at + field, message)`. `context` reaches the validators, with "source" added."""
    context = {"source": source, **(context or {})}
    try:
        if isinstance(target, type) and issubclass(target, BaseModel):
            return target.model_validate(data, context=context)
        return _adapter(target).validate_python(data, context=context)
    except ValidationError as exc:
        found = []
        for error in exc.errors(include_url=False):
            suffix, message = _located(error)
            found.append(InputError(source, _path(at, suffix) or None, message))
        raise_all(list({str(e): e for e in found}.values()))  # every mistake, each once
        raise AssertionError("unreachable") from None


_adapters: dict[Any, TypeAdapter] = {}


def _adapter(target: Any) -> TypeAdapter:
    if target not in _adapters:
        _adapters[target] = TypeAdapter(target)
    return _adapters[target]


def _untag(value: Any, handler: Callable[[Any], Any]) -> Any:
    """Re-raise a tagged union's errors without the member's tag in their locations."""
    try:
        return handler(value)
    except ValidationError as exc:
        details = []
        for error in exc.errors(include_url=False):
            suffix, message = _located({**error, "loc": error["loc"][1:]})  # loc[0]: the member's tag
            details.append(InitErrorDetails(type=PydanticCustomError(_ERROR, "{message}",
                                                                     {"at": suffix, "message": message}),
                                            loc=(), input=error.get("input")))
        raise ValidationError.from_exception_data(exc.title, details) from None


#: Put after a `Discriminator` in an `Annotated` union: its errors name fields, not members.
UNTAGGED = WrapValidator(_untag)


# -- the base model -------------------------------------------------------------------------

class Strict(BaseModel):
    """A mapping with known keys.

    Refused at once: not a mapping, a key that is not a string. Then every unknown key (with
    the allowed ones and the closest), every missing required key and every bad value are
    refused together, one error each; `check_keys_together` runs when the keys are right.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _check_keys(cls, data: Any) -> Any:
        data = mapping(data)
        for key in data:
            if not isinstance(key, str):
                fail("keys must be strings", f".{key}")
        allowed = sorted(cls.allowed_keys(data))
        unknown = sorted(set(data) - set(allowed))
        missing = [key for key in allowed if cls.model_fields[key].is_required() and key not in data]
        if unknown:  # refused by pydantic (extra="forbid") beside the other mistakes, with this message;
            data = dict(data)  # a field that does not apply here is refused by its own validator
            for key in (key for key in unknown if key not in cls.model_fields):
                close = difflib.get_close_matches(key, allowed, n=1)
                hint = f"; did you mean {close[0]!r}?" if close else ""
                data[key] = _UnknownKey(f"unknown key (allowed: {', '.join(allowed)}){hint}")
        if not unknown and not missing:
            cls.check_keys_together(data)
        return data

    @classmethod
    def allowed_keys(cls, data: dict) -> list[str]:
        """The keys this mapping may have (all the model's fields; fewer where one key decides
        which others apply, as a generator does its options)."""
        return list(cls.model_fields)

    @classmethod
    def check_keys_together(cls, data: dict) -> None:
        """Rules across keys (exactly one of two...): after the keys' own checks, before any value's."""


# -- checks: each returns the value, normalised, or fails with today's sentence ---------------------

def within(at: str, check: Callable[[Any], Any], value: Any) -> Any:
    """`check(value)`, a failure reported at the sub-field `at` ("[2]", ".key") of the value."""
    try:
        return check(value)
    except PydanticCustomError as exc:
        if exc.type != _ERROR:
            raise
        context = cast(dict[str, Any], exc.context)  # set by `fail`, which raised every error of this type
        fail(context["message"], at + context["at"])


def mapping(value: Any) -> dict:
    if not isinstance(value, dict):
        fail(f"expected a mapping, got {type_name(value)}")
    return value


def integer(value: Any, minimum: int = 1, maximum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        fail(f"expected an integer >= {minimum}, got {short_repr(value)}")
    if maximum is not None and value > maximum:
        fail(f"expected an integer <= {maximum}, got {short_repr(value)}")
    return value


def number(value: Any, low: float, high: float | None = None) -> float:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    if ok and finite(value) and value >= low and (high is None or value <= high):
        return float(value)
    bound = f"between {low} and {high}" if high is not None else f">= {low}"
    fail(f"expected a finite number {bound}, got {short_repr(value)}")


def non_empty_str(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        fail(f"expected a non-empty string, got {type_name(value)}")
    return value


def text(value: Any) -> str:
    """Free text such as a description: any string, empty included."""
    if not isinstance(value, str):
        fail(f"expected a string, got {type_name(value)}")
    return value


def _bool(value: Any) -> bool:
    if not isinstance(value, bool):
        fail(f"expected true or false, got {value!r}")
    return value


def printable_name(value: Any, limit: int = 100) -> str:
    """A name that ends up in run names and MLflow params: one printable line, not too long."""
    value = non_empty_str(value)
    if not value.isprintable() or len(value) > limit:
        fail(f"expected a name of at most {limit} printable characters on one line, got {short_repr(value)}")
    return value


IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,99}")


def identifier(value: Any) -> str:
    """A keyword-argument name (becomes an MLflow param key, which allows few characters)."""
    if not isinstance(value, str) or not IDENTIFIER.fullmatch(value):
        fail(f"expected a parameter name (letters, digits, underscores; at most 100), got {short_repr(value)}")
    return value


def choice(value: Any, choices: tuple[str, ...]) -> str:
    if value not in choices:
        fail(f"expected one of {', '.join(choices)}, got {short_repr(value)}")
    return value


def names(value: Any) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value:
        fail(f"expected a non-empty list of names, got {type_name(value)}")
    for i, item in enumerate(value):
        within(f"[{i}]", non_empty_str, item)
    if len(set(value)) != len(value):
        fail("lists a name twice")
    return value


def int_or_list(value: Any, minimum: int) -> list[int]:
    values = value if isinstance(value, list) else [value]
    if not values:
        fail("expected an integer or a non-empty list of integers, got an empty list")
    for i, item in enumerate(values):
        within(f"[{i}]" if isinstance(value, list) else "", lambda v: integer(v, minimum), item)
    return list(values)


def plain(value: Any, _open: frozenset[int] = frozenset()) -> Any:
    """A value that JSON can carry unchanged: null, boolean, finite number, string, list, mapping.

    Estimator parameters travel to the worker as JSON and into run params as text; YAML's
    dates, binary, sets, non-string keys and self-references (`&a [*a]`) would break that
    far from the file.
    """
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, float)):
        if not finite(value):
            fail(f"expected a finite number, got {short_repr(value)}")
        return value
    if isinstance(value, (list, dict)):
        if id(value) in _open:
            fail("contains itself (a YAML alias of its own anchor)")
        inner = _open | {id(value)}
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, item in items:
            if isinstance(value, list):
                at = f"[{key}]"
            elif isinstance(key, str):
                at = f".{key}"
            else:
                fail("keys must be strings", f".{key}")
            within(at, lambda v: plain(v, inner), item)
        return value
    fail(f"expected a plain value (number, string, boolean, null, list or mapping), got {type_name(value)}")


def _params(value: Any) -> dict[str, Any]:
    """Estimator keyword arguments: identifier keys, values JSON can carry to the worker (null: none)."""
    params = mapping(value or {})
    for key in params:
        within(f".{key}", identifier, key)
    return plain(params)


def or_null(check: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """`check`, but null passes (as itself)."""
    return lambda value: None if value is None else check(value)


def _no_default(schema: JsonDict) -> None:
    schema.pop("default", None)


def optional(description: str) -> Any:
    """A field that may be left out (None then: a default that depends on other fields, or nothing).
    Its schema shows no default, as null itself is not accepted unless the type says so."""
    return Field(None, description=description, json_schema_extra=_no_default)


# -- the annotated types ------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class SchemaKeywords:
    """Annotation: JSON Schema keywords (minimum, pattern...) added to a type's schema; not enforced."""

    keywords: tuple[tuple[str, Any], ...]

    def __get_pydantic_json_schema__(self, core_schema: Any, handler: Any) -> dict[str, Any]:
        return {**handler(core_schema), **dict(self.keywords)}


def checked(inner: Any, check: Callable[[Any], Any], **keywords: Any) -> Any:
    """`inner` (the JSON Schema type) validated by `check` first; `keywords` document its limits."""
    return Annotated[inner, BeforeValidator(check), SchemaKeywords(tuple(keywords.items()))]


def nullable(annotated: Any) -> Any:
    """A type made with `checked` that also accepts null."""
    inner, *metadata = get_args(annotated)
    # `checked`'s validators take the value alone
    metadata = [BeforeValidator(or_null(cast(Callable[[Any], Any], m.func))) if isinstance(m, BeforeValidator) else m
                for m in metadata]
    return Annotated[(inner | None, *metadata)]


def Int(minimum: int = 1, maximum: int | None = None) -> Any:  # noqa: N802 - a type
    bounds = {"minimum": minimum} | ({"maximum": maximum} if maximum is not None else {})
    return checked(int, lambda v: integer(v, minimum, maximum), **bounds)


def Number(low: float, high: float | None = None) -> Any:  # noqa: N802 - a type
    bounds = ({"minimum": low} if finite(low) else {}) | ({"maximum": high} if high is not None else {})
    return checked(float, lambda v: number(v, low, high), **bounds)


def Choice(*choices: str) -> Any:  # noqa: N802 - a type
    return checked(Literal[choices], lambda v: choice(v, choices))


def Name(limit: int = 100) -> Any:  # noqa: N802 - a type
    return checked(str, lambda v: printable_name(v, limit), minLength=1, maxLength=limit)


def IntOrList(minimum: int) -> Any:  # noqa: N802 - a type
    """An integer or a non-empty list of them (a sweep axis), always a list once validated."""
    one = Annotated[int, SchemaKeywords((("minimum", minimum),))]
    return checked(Annotated[list[one], SchemaKeywords((("minItems", 1),))] | one, lambda v: int_or_list(v, minimum))


def positive(value: Any) -> float:
    """A finite number > 0 (a price: 0 would make every ratio with it infinite)."""
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    if ok and finite(value) and value > 0:
        return float(value)
    fail(f"expected a finite number > 0, got {short_repr(value)}")


Positive = checked(float, positive, exclusiveMinimum=0)
Bool = checked(bool, _bool)
Text = checked(str, text)
NonEmptyStr = checked(str, non_empty_str, minLength=1)
#: One name or a non-empty list of different names (always a list once validated).
Names = checked(Annotated[list[str], SchemaKeywords((("minItems", 1), ("uniqueItems", True)))] | str, names)
Params = checked(dict[str, Any], _params, propertyNames={"pattern": f"^{IDENTIFIER.pattern}$"})
