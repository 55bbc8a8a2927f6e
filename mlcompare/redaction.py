"""What may be shown of a store URI: its password and tokens masked, wherever it is printed.

A tracking URI may carry a password (`http://user:PASSWORD@host:5000`,
`postgresql://user:PASSWORD@host/db`) or a token in its query (`?token=...`). Every line,
tag, param or artifact that shows a URI, or a message that may hold one (MLflow's errors
name the URL they called), goes through `redact` first. It imports nothing, so the suite's
side, the case's side and the tracking room all use this one function.
"""

from __future__ import annotations

import re

MASK = "***"
#: `scheme://USERINFO@`: the user-info runs to the last `@` before the path, query or fragment
#: (a password with an unescaped `@` is still masked whole).
_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.\-]*://)(?P<userinfo>[^/?#\s]*)@")
#: A query parameter whose name says it holds a secret (password, passwd, pwd, token, secret,
#: api_key, sig, credential, auth...): its value runs to the next `&`, `;`, `#` or blank.
_SECRET_PARAM = re.compile(
    r"(?P<name>[?&;][\w.\-]*(?:pass|pwd|secret|token|key|sig|credential|auth)[\w.\-]*=)(?P<value>[^&;#\s]*)",
    re.IGNORECASE)


def redact(text: str) -> str:
    """`text` (a URI, or a message holding URIs) with every password, user-info token and secret
    query value replaced by `***`; the user name is kept (`http://alice:***@host`), a user-info
    without a colon is taken for a token (`https://***@host`)."""

    def userinfo(match: re.Match[str]) -> str:
        user, colon, _ = match["userinfo"].partition(":")
        return f"{match['scheme']}{user}:{MASK}@" if colon else f"{match['scheme']}{MASK}@"

    masked = _USERINFO.sub(userinfo, text)
    return _SECRET_PARAM.sub(lambda m: f"{m['name']}{MASK}" if m["value"] else m[0], masked)


def carries_secret(text: str) -> bool:
    """Whether `redact` would change `text`."""
    return redact(text) != text
