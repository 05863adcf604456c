"""Load a YAML/JSON file into a (nested) dataclass config and validate it before anything heavy runs.

Every training stage describes its settings as a dataclass and calls :func:`load_config`, so a typo or a
bad value fails in milliseconds with a message naming the key, instead of after a model has loaded.

Example:
    >>> @dataclass
    ... class Stage:
    ...     output_dir: str
    ...     seed: int = 13
    >>> cfg = load_config("stage.yaml", Stage, overrides=["seed=7"])

Rules:
    * unknown keys are rejected (with the list of valid keys);
    * values are checked against the annotations: ``int``, ``float`` (an int is accepted), ``bool``, ``str``,
      ``Path``, ``Literal[...]``, ``X | None``, ``list[X]``, ``tuple[X, ...]``, ``dict[str, X]`` and nested
      dataclasses (YAML mappings);
    * ``__post_init__`` of the dataclass may raise ``ValueError`` for cross-field rules; the message is
      prefixed with the config source;
    * ``--set a.b=value`` overrides parse ``value`` as a YAML scalar/flow value (``7``, ``true``, ``null``,
      ``[ctd, mcqr]``), dotted keys reach into nested sections.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, TypeVar, get_args, get_origin, get_type_hints

__all__ = [
    "add_config_arguments",
    "config_from_args",
    "config_to_dict",
    "from_dict",
    "load_config",
    "parse_override",
    "read_config_file",
]

T = TypeVar("T")
_MISSING = dataclasses.MISSING


def load_config(
    path: str | Path | None,
    config_class: type[T],
    overrides: Sequence[str] = (),
) -> T:
    """Read ``path`` (``.yaml``/``.yml``/``.json``; ``None`` = only defaults) into ``config_class``.

    Args:
        path: Config file, or ``None`` to start from the dataclass defaults.
        config_class: A dataclass type; nested dataclass fields become nested mappings.
        overrides: ``"key=value"`` strings applied on top of the file (dotted keys for nested fields).

    Returns:
        A validated instance of ``config_class``.

    Raises:
        ValueError: The file is unreadable or malformed, a key is unknown, a value has the wrong type, or
            the dataclass' own ``__post_init__`` rejected it. The message names the key and the value.
    """
    source = str(path) if path is not None else "<defaults>"
    data: dict[str, Any] = read_config_file(Path(path)) if path is not None else {}
    for item in overrides:
        keys, value = parse_override(item)
        _set_nested(data, keys, value, item)
        source_note = " (with --set overrides)"
        if not source.endswith(source_note):
            source += source_note
    return from_dict(config_class, data, source=source)


def from_dict(config_class: type[T], data: Mapping[str, Any], *, source: str = "config") -> T:
    """Build ``config_class`` from a plain mapping with the same validation as :func:`load_config`."""
    if not dataclasses.is_dataclass(config_class):
        raise TypeError(f"{config_class!r} is not a dataclass")
    return _build(config_class, data, prefix="", source=source)


def parse_override(item: str) -> tuple[list[str], Any]:
    """Split ``"a.b=value"`` into ``(["a", "b"], parsed_value)``; the value is parsed as YAML."""
    key, sep, raw = item.partition("=")
    key = key.strip()
    if not sep or not key or any(not part for part in key.split(".")):
        raise ValueError(f"--set expects key=value (dotted keys for nested fields), got {item!r}")
    return key.split("."), _parse_scalar(raw.strip())


def config_to_dict(config: Any) -> dict[str, Any]:
    """A JSON-serialisable dict of a config (paths become strings, tuples lists)."""
    return json.loads(json.dumps(dataclasses.asdict(config), default=str))


def add_config_arguments(parser: argparse.ArgumentParser, *, required: bool = True) -> None:
    """Add the standard ``--config PATH`` and repeatable ``--set key=value`` arguments to a stage CLI."""
    parser.add_argument("--config", required=required, help="YAML or JSON config file")
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override one config value (dotted keys for nested sections); repeatable",
    )


def config_from_args(args: argparse.Namespace, config_class: type[T]) -> T:
    """Load the config named by parsed ``--config`` / ``--set`` arguments."""
    return load_config(args.config, config_class, overrides=args.overrides)


# --------------------------------------------------------------------------------------------- internals


def read_config_file(path: Path) -> dict[str, Any]:
    """The top-level mapping of a ``.yaml`` / ``.yml`` / ``.json`` config file (``{}`` for an empty one).

    Raises:
        ValueError: The file is missing, has another suffix, does not parse, or is not a mapping.
    """
    if not path.is_file():
        raise ValueError(f"config file not found: {path}")
    text = path.read_text(encoding="utf-8")
    suffix = path.suffix.lower()
    try:
        if suffix == ".json":
            data = json.loads(text) if text.strip() else {}
        elif suffix in (".yaml", ".yml"):
            import yaml  # lazy: only the training extra needs PyYAML

            data = yaml.safe_load(text)
        else:
            raise ValueError(f"config file must end in .yaml, .yml or .json, got {path.name!r}")
    except (json.JSONDecodeError, ImportError) as error:
        raise ValueError(f"cannot parse config {path}: {error}") from error
    except Exception as error:  # yaml.YAMLError without importing yaml at module level
        if type(error).__module__.startswith("yaml"):
            raise ValueError(f"cannot parse config {path}: {error}") from error
        raise
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ValueError(f"config {path} must be a mapping at the top level, got {type(data).__name__}")
    return data


def _parse_scalar(raw: str) -> Any:
    try:
        import yaml

        return yaml.safe_load(raw) if raw else ""
    except ImportError:
        try:
            return json.loads(raw)
        except json.JSONDecodeError:
            return raw
    except Exception:  # noqa: BLE001 - not valid YAML (e.g. "a: b: c"): keep it as the literal string
        return raw


def _set_nested(data: dict[str, Any], keys: list[str], value: Any, item: str) -> None:
    node = data
    for key in keys[:-1]:
        child = node.setdefault(key, {})
        if not isinstance(child, dict):
            raise ValueError(f"--set {item!r}: {key!r} is not a section, cannot set a key inside it")
        node = child
    node[keys[-1]] = value


def _build(cls: type[T], data: Any, *, prefix: str, source: str) -> T:
    where = prefix.rstrip(".") or "top level"
    if not isinstance(data, Mapping):
        raise ValueError(f"{source}: '{where}' must be a mapping, got {data!r}")
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    hints = get_type_hints(cls)
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise ValueError(
            f"{source}: unknown key '{prefix}{unknown[0]}' in {where}; valid keys: {', '.join(sorted(fields))}"
        )
    kwargs: dict[str, Any] = {}
    for name, field in fields.items():
        key = f"{prefix}{name}"
        if name in data:
            kwargs[name] = _coerce(data[name], hints[name], key=key, source=source)
        elif field.default is _MISSING and field.default_factory is _MISSING:
            raise ValueError(f"{source}: missing required key '{key}'")
    try:
        return cls(**kwargs)
    except ValueError as error:
        raise ValueError(f"{source}: {error}") from error


def _type_name(tp: Any) -> str:
    return getattr(tp, "__name__", None) or str(tp).replace("typing.", "")


def _bad(value: Any, expected: str, key: str, source: str) -> ValueError:
    return ValueError(f"{source}: invalid value for '{key}': expected {expected}, got {value!r}")


# The plain types a YAML scalar is read as: what it accepts, what an error says it expected, how it is converted.
_SCALARS: dict[type, tuple[Callable[[Any], bool], str, Callable[[Any], Any]]] = {
    bool: (lambda value: isinstance(value, bool), "true or false", lambda value: value),
    int: (lambda value: isinstance(value, int) and not isinstance(value, bool), "an integer", lambda value: value),
    float: (lambda value: isinstance(value, (int, float)) and not isinstance(value, bool), "a number", float),
    str: (lambda value: isinstance(value, str), "a string", lambda value: value),
    Path: (lambda value: isinstance(value, (str, Path)), "a path string", Path),
}


def _coerce(value: Any, tp: Any, *, key: str, source: str) -> Any:
    if tp is Any:
        return value
    origin = get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        return _coerce_union(value, tp, key=key, source=source)
    if dataclasses.is_dataclass(tp):
        return _build(tp, value, prefix=f"{key}.", source=source)
    if origin in (list, Sequence, tuple) or tp in (list, tuple):
        return _coerce_sequence(value, tp, key=key, source=source)
    if origin in (dict, Mapping) or tp is dict:
        return _coerce_mapping(value, tp, key=key, source=source)
    return _coerce_leaf(value, tp, key=key, source=source)


def _coerce_leaf(value: Any, tp: Any, *, key: str, source: str) -> Any:
    """A value of a ``Literal``, a plain scalar type (:data:`_SCALARS`) or any other class, taken as it is."""
    if get_origin(tp) is Literal:
        if any(value == choice and type(value) is type(choice) for choice in get_args(tp)):
            return value
        raise _bad(value, "one of " + ", ".join(repr(a) for a in get_args(tp)), key, source)
    if tp in _SCALARS:
        accepts, expected, convert = _SCALARS[tp]
        if accepts(value):
            return convert(value)
        raise _bad(value, expected, key, source)
    if isinstance(tp, type):
        if isinstance(value, tp):
            return value
        raise _bad(value, tp.__name__, key, source)
    raise TypeError(f"{source}: unsupported annotation {tp!r} for '{key}'")


def _coerce_union(value: Any, tp: Any, *, key: str, source: str) -> Any:
    """The first member of an ``X | Y | None`` that takes ``value``; its error when only one member could."""
    args = get_args(tp)
    if value is None:
        if type(None) in args:
            return None
        raise _bad(value, _type_name(tp), key, source)
    errors = []
    for arg in args:
        if arg is type(None):
            continue
        try:
            return _coerce(value, arg, key=key, source=source)
        except ValueError as error:
            errors.append(error)
    if len(errors) == 1:
        raise errors[0]
    raise _bad(value, " or ".join(_type_name(a) for a in args), key, source)


def _coerce_sequence(value: Any, tp: Any, *, key: str, source: str) -> list[Any] | tuple[Any, ...]:
    """A YAML list as a ``list[X]``, a ``tuple[X, ...]`` or a fixed ``tuple[X, Y]``."""
    origin = get_origin(tp)
    args = get_args(tp)
    if not isinstance(value, (list, tuple)):
        raise _bad(value, f"a list ({_type_name(tp)})", key, source)
    if origin is tuple and args and not (len(args) == 2 and args[1] is Ellipsis):
        if len(args) != len(value):
            raise _bad(value, f"a list of {len(args)} items", key, source)
        items = [_coerce(v, a, key=f"{key}[{i}]", source=source) for i, (v, a) in enumerate(zip(value, args))]
    else:
        item_tp = args[0] if args else Any
        items = [_coerce(v, item_tp, key=f"{key}[{i}]", source=source) for i, v in enumerate(value)]
    return tuple(items) if (origin is tuple or tp is tuple) else items


def _coerce_mapping(value: Any, tp: Any, *, key: str, source: str) -> dict[Any, Any]:
    if not isinstance(value, Mapping):
        raise _bad(value, "a mapping", key, source)
    key_tp, val_tp = get_args(tp) or (Any, Any)
    return {
        _coerce(k, key_tp, key=f"{key}.<key>", source=source): _coerce(v, val_tp, key=f"{key}.{k}", source=source)
        for k, v in value.items()
    }
