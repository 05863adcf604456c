"""A cache URL that holds a credential, and the one way such a URL is shown.

A Redis URL may carry a password (``redis://:password@host:6379/0``, ``redis://user:password@host``, or
``?password=...`` in its query). :func:`redacted_url` is how every message, log line, repr and manifest shows such a
URL. :class:`SecretURL` holds one so that nothing that prints, dumps or serialises the object holding it (an adapter's
``repr``, pydantic's ``model_dump``, LangChain's ``dumpd``, LlamaIndex's ``to_dict``) can show the password: its
``repr`` and ``str`` are the redacted URL, and only :meth:`SecretURL.get_secret_value` gives the URL itself.
:meth:`SecretURL.from_env` reads it from an environment variable (``TPC_CACHE_URL`` by default), as Redis clients
commonly read ``REDIS_URL``. A pydantic ``SecretStr`` holding a URL is accepted wherever a ``SecretURL`` is
(:func:`reveal`).
"""

from __future__ import annotations

import os
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

__all__ = ["DEFAULT_URL_VARIABLE", "SecretURL", "is_redacted", "is_secret", "redacted_url", "reveal"]

DEFAULT_URL_VARIABLE = "TPC_CACHE_URL"
"""The environment variable :meth:`SecretURL.from_env` reads by default."""

_MASK = "***"
_SECRET_QUERY_KEYS = frozenset({"password", "pass", "pwd"})


def redacted_url(url: str) -> str:
    """``url`` with its password replaced by ``***``: the password of its user info, and any ``password=`` of its
    query. A string that does not parse as a URL is shown as ``***`` entirely (it may be a credential)."""
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:  # an invalid port or netloc: nothing of it is shown
        return _MASK
    netloc = parts.netloc
    if password is not None:
        user = parts.netloc.rsplit("@", 1)[0].split(":", 1)[0]
        netloc = f"{user}:{_MASK}@{parts.netloc.rsplit('@', 1)[1]}"
    query = parts.query
    pairs = parse_qsl(query, keep_blank_values=True)
    if any(key.lower() in _SECRET_QUERY_KEYS for key, _ in pairs):
        query = urlencode([(key, _MASK if key.lower() in _SECRET_QUERY_KEYS else value) for key, value in pairs],
                          safe="*")
    if netloc == parts.netloc and query == parts.query:
        return url
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def is_redacted(url: str) -> bool:
    """Whether ``url`` holds passwords and every one of them is the ``***`` of :func:`redacted_url` (a URL copied
    from a message, a repr or a dump: it cannot connect)."""
    try:
        parts = urlsplit(url)
        found = [parts.password] if parts.password is not None else []
    except ValueError:
        return False
    found += [value for key, value in parse_qsl(parts.query, keep_blank_values=True)
              if key.lower() in _SECRET_QUERY_KEYS]
    return bool(found) and all(password == _MASK for password in found)


class SecretURL:
    """A URL holding a credential: shown redacted everywhere, given whole only by :meth:`get_secret_value`.

    Pass it as ``cache=`` (to :meth:`tpc_core.TPCCompressor.compress` or to an adapter); the adapters also turn a
    ``cache=`` URL that holds a password into one. Two secrets are equal when their URLs are. A copy or pickle keeps
    the URL (a worker process must be able to connect); :func:`repr`, :func:`str`, JSON and every dump show
    :func:`redacted_url` of it.

    Args:
        url: The URL, password included.
        variable: The environment variable it was read from, if any (shown in messages, never its value).

    Raises:
        TypeError: ``url`` is not a string.
        ValueError: ``url`` is empty or not a URL (``scheme://...``); the message never shows it.

    Example:
        >>> secret = SecretURL("redis://:s3cret@cache:6379/0")
        >>> secret
        SecretURL('redis://:***@cache:6379/0')
        >>> secret.get_secret_value()
        'redis://:s3cret@cache:6379/0'
    """

    __slots__ = ("_url", "variable")

    def __init__(self, url: str, *, variable: str | None = None) -> None:
        if not isinstance(url, str):
            raise TypeError(f"SecretURL takes the URL as a str, got {type(url).__name__}.")
        where = "SecretURL got" if variable is None else f"The environment variable {variable} holds"
        if not url.strip():
            raise ValueError(f"{where} an empty string: set it to the cache's URL.")
        if "://" not in url:
            raise ValueError(f"{where} a string that is not a URL (scheme://..., not shown here): give the cache's "
                             "URL, for example redis://:PASSWORD@host:6379/0.")
        self._url = url
        self.variable = variable

    @classmethod
    def from_env(cls, variable: str = DEFAULT_URL_VARIABLE) -> SecretURL:
        """The URL in the environment variable ``variable`` (default ``TPC_CACHE_URL``), read now.

        Raises:
            ValueError: The variable is not set, or is empty (the message names the variable, never a value).
        """
        url = os.environ.get(variable)
        if url is None:
            raise ValueError(f"The environment variable {variable} is not set: set it to the cache's URL (for "
                             f"example redis://:PASSWORD@host:6379/0), or pass the URL itself.")
        return cls(url, variable=variable)

    def get_secret_value(self) -> str:
        """The URL, password included (what connects; never shown)."""
        return self._url

    def __str__(self) -> str:
        return redacted_url(self._url)

    def __repr__(self) -> str:
        return f"SecretURL({redacted_url(self._url)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SecretURL) and other._url == self._url

    def __hash__(self) -> int:
        return hash((SecretURL, self._url))

    def __reduce__(self) -> tuple[Any, ...]:
        return SecretURL, (self._url,), {"variable": self.variable}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.variable = state.get("variable")


def is_secret(value: Any) -> bool:
    """Whether ``value`` holds a secret string: a :class:`SecretURL` or a pydantic ``SecretStr`` (anything with a
    ``get_secret_value`` method that returns a string)."""
    if isinstance(value, SecretURL):
        return True
    getter = getattr(value, "get_secret_value", None)
    return callable(getter) and not isinstance(value, type) and isinstance(getter(), str)


def reveal(value: Any) -> Any:
    """The string a secret holds (:func:`is_secret`), or ``value`` itself when it is not one."""
    return value.get_secret_value() if is_secret(value) else value
