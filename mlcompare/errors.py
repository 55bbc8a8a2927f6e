"""The one error type for bad input: it renders as a single line naming file and field."""

from __future__ import annotations


class InputError(Exception):
    """A user-supplied file or flag is wrong; the CLI prints it as one line and exits 2."""

    def __init__(self, source: str, field: str | None, message: str) -> None:
        self.source = source
        self.field = field
        self.message = message
        super().__init__(str(self))

    def __reduce__(self):  # rebuilt from its parts (a forked child raises it in its parent)
        return type(self), (self.source, self.field, self.message)

    def __str__(self) -> str:
        where = f"{self.source}: {self.field}" if self.field else self.source
        return one_line(f"{where}: {self.message}")


class InputErrors(InputError):
    """Every mistake found in one file at once: one line each (`str` joins them with newlines)."""

    def __init__(self, errors: list[InputError]) -> None:
        self.errors = list(errors)
        first = self.errors[0]
        super().__init__(first.source, first.field, first.message)

    def __reduce__(self):
        return type(self), (self.errors,)

    def __str__(self) -> str:
        return "\n".join(str(error) for error in self.errors)


def raise_all(errors: list[InputError]) -> None:
    """Raise the one error, or all of them together; nothing when the list is empty."""
    if len(errors) == 1:
        raise errors[0]
    if errors:
        raise InputErrors(errors)


def one_line(text: str) -> str:
    """Escape every character that could break a line (a file name or a YAML key may hold one)."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in text)
