"""Corpus input and output for ``tpc compress-corpus``: formats, validation, row ids and resuming.

Nothing here loads a model, so every check runs before the (slow) model load. The layout of OUT is the same
for both engines: a directory of Parquet files (``*.parquet``, read with ``pandas.read_parquet(OUT)``,
``pyarrow.parquet.read_table(OUT)`` or ``ray.data.read_parquet(OUT)``), plus ``_tpc_corpus.json``, the settings
the rows were compressed with (files starting with ``_`` are ignored by those readers). Each output row is an
input row plus :data:`OUTPUT_COLUMNS`; when IN has no id column, a ``row`` column (the row's 0-based number in
IN) identifies it.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["CorpusInputError", "CorpusSettings", "CorpusPlan", "OUTPUT_COLUMNS", "ROW_COLUMN", "MANIFEST_NAME",
           "WARMED", "input_files", "output_schema", "plan_corpus", "done_ids", "pending_mask", "recorded_settings"]

logger = logging.getLogger(__name__)

#: Columns added to every row: the compressed text, token counts (the compressor's token counter), the task
#: description each row was compressed for, with its source (a :class:`tpc_core.engine.values.TaskSource` value:
#: ``"question"`` for a fixed ``--task-description``; empty when nothing needed scoring), and what happened
#: (``compression``: :attr:`tpc_core.CompressionResult.status`).
OUTPUT_COLUMNS: tuple[str, ...] = ("compressed_text", "origin_tokens", "compressed_tokens", "task_description",
                                   "task_source", "compression")
#: The id column written when IN has none: the row's 0-based number in IN.
ROW_COLUMN = "row"
MANIFEST_NAME = "_tpc_corpus.json"
#: Settings added after OUT manifests were first written, with the behaviour of the runs that did not record them
#: (before ``describe_bare`` existed, the CTD described every row with no written request).
_SETTINGS_BEFORE_THEY_WERE_RECORDED: dict[str, Any] = {"describe_bare": True, "warm_cache": None}
#: The ``compression`` status of a row whose sentence-cache entry ``--warm-cache`` stored: its text is whole.
WARMED = "cached"
JSONL_SUFFIXES = (".jsonl", ".jsonl.gz", ".json", ".json.gz", ".ndjson")
PARQUET_SUFFIXES = (".parquet",)


class CorpusInputError(ValueError):
    """IN, OUT or an option cannot be used; raised before any model loads (the CLI exits with code 2)."""


@dataclass(frozen=True)
class CorpusSettings:
    """What decides a row's output; OUT records it, and resuming with other settings is refused.

    Attributes:
        model: Checkpoint name or path.
        rate: Kept fraction of tokens (exclusive with ``target_tokens``; both ``None`` means the default 0.2).
        target_tokens: Budget in tokens per row.
        task_description: One description for every row (compressed as if it were the question); ``None``: the
            compressor describes each row itself (prompt-agnostic mode).
        text_column: The column holding the text to compress.
        id_column: The column identifying a row; ``None``: rows are identified by their number in IN.
        token_counter: How tokens are counted (``None``: the CSE tokenizer).
        describe_bare: Without ``task_description``, whether the CTD describes a row in which the request head
            finds no written request (one generation per such row). ``False`` (default): such a row gets the
            checkpoint's fallback task, the one the CTD's ungrounded descriptions lead to, without a generation
            (see :class:`tpc_core.engine.task.finder.TaskFinder`).
        warm_cache: A directory or a ``redis://`` URL: instead of compressing, store each row's sentence-cache entry
            there (its sentences, counts and embeddings; :mod:`tpc_core.cache`) and write the row's whole text,
            status ``"cached"``, so that an index of the full text is compressed at query time, per question, by a
            compressor given the same value as ``cache=``. A row is written to OUT only once its entry is stored;
            a Redis that fails stops the run (:class:`~tpc_core.cache.redis_store.CacheUnavailable`). ``None``
            (default): compress. Excludes the budget and the task description.
    """

    model: str
    rate: float | None = None
    target_tokens: int | None = None
    task_description: str | None = None
    text_column: str = "text"
    id_column: str | None = "id"
    token_counter: str | None = None
    describe_bare: bool = False
    warm_cache: str | None = None

    @property
    def id_field(self) -> str:
        """The column of OUT that identifies a row."""
        return self.id_column or ROW_COLUMN

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class CorpusPlan:
    """A validated run: which files to read, which rows are still to do.

    Attributes:
        files: The input files (one format).
        format: ``"jsonl"`` or ``"parquet"``.
        out_dir: The output directory.
        settings: The compression settings.
        total_rows: Rows in IN.
        done: Ids of the rows already in OUT (skipped).
        schema: IN's Arrow schema.
    """

    files: tuple[Path, ...]
    format: str
    out_dir: Path
    settings: CorpusSettings
    total_rows: int
    done: frozenset[Any] = field(default_factory=frozenset)
    schema: pa.Schema | None = None

    @property
    def pending_rows(self) -> int:
        return self.total_rows - len(self.done)


def _require_pyarrow() -> None:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise CorpusInputError("compress-corpus reads and writes Arrow/Parquet: pip install 'tpc-langchain[corpus]'"
                               ) from None


def _format_of(path: Path) -> str | None:
    name = path.name.lower()
    if name.endswith(JSONL_SUFFIXES):
        return "jsonl"
    if name.endswith(PARQUET_SUFFIXES):
        return "parquet"
    return None


def input_files(path: str | Path) -> tuple[tuple[Path, ...], str]:
    """The files of IN and their format: a JSONL or Parquet file, or a directory of files of one format.

    Raises:
        CorpusInputError: IN is missing, empty, of an unknown format, or mixes formats.
    """
    source = Path(path)
    if not source.exists():
        raise CorpusInputError(f"no such file or directory: {source}")
    if source.is_dir():
        files = sorted(p for p in source.iterdir() if p.is_file() and not p.name.startswith(("_", ".")))
        formats = {found for found in map(_format_of, files) if found is not None}
        if not formats:
            raise CorpusInputError(f"{source} holds no .jsonl, .jsonl.gz, .json or .parquet file")
        if len(formats) > 1:
            raise CorpusInputError(f"{source} mixes JSONL and Parquet files; give one format")
        chosen = formats.pop()
        return tuple(p for p in files if _format_of(p) == chosen), chosen
    file_format = _format_of(source)
    if file_format is None:
        raise CorpusInputError(f"unknown format of {source}: give a .jsonl, .jsonl.gz, .json or .parquet file "
                               f"(one JSON object per line, or Parquet)")
    return (source,), file_format


def open_dataset(files: Iterable[Path], file_format: str) -> Any:
    """A ``pyarrow.dataset.Dataset`` over ``files`` (``"jsonl"`` or ``"parquet"``)."""
    import pyarrow.dataset as pds

    return pds.dataset([str(p) for p in files], format="json" if file_format == "jsonl" else "parquet")


def output_schema(input_schema: pa.Schema, settings: CorpusSettings) -> pa.Schema:
    """OUT's schema: IN's columns, the ``row`` column when rows are numbered, then :data:`OUTPUT_COLUMNS`."""
    import pyarrow as pa

    fields = list(input_schema)
    if settings.id_column is None:
        fields.append(pa.field(ROW_COLUMN, pa.int64()))
    fields += [pa.field("compressed_text", pa.string()), pa.field("origin_tokens", pa.int64()),
               pa.field("compressed_tokens", pa.int64()), pa.field("task_description", pa.string()),
               pa.field("task_source", pa.string()), pa.field("compression", pa.string())]
    return pa.schema(fields)


def _read_manifest(out_dir: Path) -> dict[str, Any] | None:
    path = out_dir / MANIFEST_NAME
    if not path.is_file():
        return None
    return json.loads(path.read_text(encoding="utf-8"))


def write_manifest(out_dir: Path, settings: CorpusSettings) -> None:
    """Record the settings of OUT's rows (created with OUT, before any row is written)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / MANIFEST_NAME).write_text(json.dumps({"tpc_compress_corpus": 1, "settings": recorded_settings(settings)},
                                                    indent=2) + "\n", encoding="utf-8")


def done_ids(out_dir: Path, id_field: str) -> set[Any]:
    """Ids of the rows already in OUT's Parquet files.

    A file that is not valid Parquet (a run killed while writing it leaves one truncated) is removed with a
    warning: its rows are not counted as done, so they are compressed again and nothing is lost.

    Raises:
        CorpusInputError: A file lacks the id column, or a row id occurs twice in OUT.
    """
    import pyarrow.parquet as pq

    seen: set[Any] = set()
    for path in sorted(out_dir.glob("*.parquet")):
        try:
            ids = pq.read_table(path, columns=[id_field]).column(id_field).to_pylist()
        except KeyError:
            raise CorpusInputError(f"{path} has no {id_field!r} column: OUT was written with another id column"
                                   ) from None
        except Exception as error:  # noqa: BLE001 - pyarrow raises ArrowInvalid/OSError for a truncated file
            logger.warning("removing %s, an incomplete part file (%s); its rows will be compressed again",
                           path, error)
            path.unlink()
            continue
        duplicates = seen.intersection(ids)
        if duplicates or len(set(ids)) != len(ids):
            raise CorpusInputError(f"row ids occur twice in {out_dir} (e.g. in {path.name}); OUT is inconsistent")
        seen.update(ids)
    return seen


def pending_mask(ids: Iterable[Any], done: frozenset[Any] | set[Any]) -> list[bool]:
    """For each id, whether its row still has to be compressed."""
    return [row_id not in done for row_id in ids]


def _check_columns(schema: pa.Schema, settings: CorpusSettings, explicit_id: bool) -> CorpusSettings:
    import pyarrow as pa

    names = set(schema.names)
    if settings.text_column not in names:
        raise CorpusInputError(f"IN has no text column {settings.text_column!r} (columns: "
                               f"{', '.join(schema.names)}); choose one with --text-column")
    text_type = schema.field(settings.text_column).type
    if not (pa.types.is_string(text_type) or pa.types.is_large_string(text_type)):
        raise CorpusInputError(f"column {settings.text_column!r} holds {text_type}, not text")
    if settings.id_column is not None and settings.id_column not in names:
        if explicit_id:
            raise CorpusInputError(f"IN has no id column {settings.id_column!r} (columns: {', '.join(schema.names)})")
        settings = CorpusSettings(**{**settings.to_dict(), "id_column": None})
    added = set(OUTPUT_COLUMNS) | ({ROW_COLUMN} if settings.id_column is None else set())
    clash = sorted(added & names)
    if clash:
        raise CorpusInputError(f"IN already has column(s) {', '.join(clash)}, which compress-corpus writes; "
                               f"rename them" + (" or pass --id-column row" if clash == [ROW_COLUMN] else ""))
    return settings


def _check_rows(table: pa.Table, settings: CorpusSettings) -> list[Any]:
    """The row ids of IN (checked unique and non-null); every text must be present."""
    import pyarrow.compute as pc

    texts = table.column(settings.text_column)
    if texts.null_count:
        first = pc.index(pc.is_null(texts), True).as_py()
        raise CorpusInputError(f"row {first} of IN has no {settings.text_column!r} (null); every row needs a text")
    if settings.id_column is None:
        return list(range(table.num_rows))
    ids = table.column(settings.id_column)
    if ids.null_count:
        first = pc.index(pc.is_null(ids), True).as_py()
        raise CorpusInputError(f"row {first} of IN has no {settings.id_column!r} (null); every row needs an id")
    values = ids.to_pylist()
    if len(set(values)) != len(values):
        counts = pc.value_counts(ids)
        repeated = next(v["values"] for v in counts.to_pylist() if v["counts"] > 1)
        raise CorpusInputError(f"id {repeated!r} occurs more than once in column {settings.id_column!r}; ids must "
                               f"be unique (choose another column with --id-column)")
    return values


def _deciding(settings: dict[str, Any]) -> dict[str, Any]:
    """The settings that decide a row's output: ``describe_bare`` does not when one description serves all rows."""
    if settings.get("task_description") is not None:
        return {k: v for k, v in settings.items() if k != "describe_bare"}
    return settings


def _check_warm_cache(settings: CorpusSettings) -> CorpusSettings:
    """``settings`` with ``warm_cache`` as an absolute path (what OUT records), once the directory is known to be
    writable and no compression option is set beside it."""
    if settings.warm_cache is None:
        return settings
    given = {"--rate": settings.rate, "--target-tokens": settings.target_tokens,
             "--task-description": settings.task_description, "--describe-bare": settings.describe_bare or None}
    compressing = [flag for flag, value in given.items() if value is not None]
    if compressing:
        raise CorpusInputError(f"--warm-cache keeps every row's text whole and stores its cache entry, so "
                               f"{', '.join(compressing)} would do nothing: give them to the query-time compressor, "
                               "or run without --warm-cache to compress at ingestion")
    from tpc_core.cache.redis_store import is_redis_url

    if is_redis_url(settings.warm_cache):
        _check_redis(settings.warm_cache)
        return settings
    from tpc_core.cache import DirectoryCache

    try:
        directory = DirectoryCache(settings.warm_cache).directory.resolve()
    except (OSError, ValueError) as error:
        raise CorpusInputError(f"--warm-cache: {error}") from None
    return replace(settings, warm_cache=str(directory))


def _check_redis(url: str) -> None:
    """The Redis server of ``--warm-cache redis://...`` answers (one ``PING``, within the client timeout)."""
    from tpc_core.cache.redis_store import RedisCache, redacted_url

    try:
        RedisCache.from_url(url).client.ping()
    except (ImportError, ValueError) as error:
        raise CorpusInputError(f"--warm-cache: {error}") from None
    except Exception as error:  # noqa: BLE001 - redis-py's ConnectionError, TimeoutError, AuthenticationError
        raise CorpusInputError(f"--warm-cache: the Redis server at {redacted_url(url)} does not answer "
                               f"({type(error).__name__}: {error}); start it, or check the URL") from None


def recorded_settings(settings: CorpusSettings) -> dict[str, Any]:
    """The settings as OUT's manifest records them (and as a resume compares them): a Redis URL's password is
    never written."""
    from tpc_core.cache.redis_store import is_redis_url, redacted_url

    recorded = settings.to_dict()
    if settings.warm_cache is not None and is_redis_url(settings.warm_cache):
        recorded["warm_cache"] = redacted_url(settings.warm_cache)
    return recorded


def plan_corpus(source: str | Path, out: str | Path, settings: CorpusSettings, *,
                explicit_id: bool = True) -> CorpusPlan:
    """Validate IN, OUT and the settings, and find the rows still to do. Loads no model.

    Args:
        source: IN: a JSONL/Parquet file or a directory of them.
        out: OUT: a directory (created if missing).
        settings: Compression settings; ``id_column`` missing from IN is an error when ``explicit_id``,
            otherwise rows are identified by their number in IN.
        explicit_id: Whether the user named the id column.

    Raises:
        CorpusInputError: Anything that would make the run fail or lose rows, with what to do about it.
    """
    from tpc_core.engine.selection.budget import validate_budget_args

    try:
        validate_budget_args(settings.target_tokens, settings.rate)
    except (TypeError, ValueError) as error:
        raise CorpusInputError(str(error)) from None
    if not isinstance(settings.describe_bare, bool):
        raise CorpusInputError(f"describe_bare must be True or False, got {settings.describe_bare!r}")
    settings = _check_warm_cache(settings)
    files, file_format = input_files(source)
    _require_pyarrow()
    out_dir = _checked_out_dir(source, out)
    try:
        dataset = open_dataset(files, file_format)
        schema = dataset.schema
        settings = _check_columns(schema, settings, explicit_id)
        columns = [settings.text_column] + ([settings.id_column] if settings.id_column else [])
        table = dataset.to_table(columns=columns)
    except CorpusInputError:
        raise
    except Exception as error:  # noqa: BLE001 - pyarrow's parse errors name the file and line
        raise CorpusInputError(f"cannot read {source}: {error}") from None
    ids = _check_rows(table, settings)
    done = _resumed_ids(out_dir, settings, ids) if out_dir.is_dir() and any(out_dir.iterdir()) else set()
    return CorpusPlan(files=files, format=file_format, out_dir=out_dir, settings=settings, total_rows=len(ids),
                      done=frozenset(done), schema=schema)


def _checked_out_dir(source: str | Path, out: str | Path) -> Path:
    """OUT as a path, once it is neither a file nor IN or inside IN."""
    out_dir = Path(out)
    if out_dir.exists() and not out_dir.is_dir():
        raise CorpusInputError(f"OUT {out_dir} exists and is not a directory; OUT is a directory of Parquet files")
    if out_dir.resolve() == Path(source).resolve() or Path(source).resolve() in out_dir.resolve().parents:
        raise CorpusInputError("OUT must not be IN or inside it")
    return out_dir


def _resumed_ids(out_dir: Path, settings: CorpusSettings, ids: list[Any]) -> set[Any]:
    """The row ids a non-empty OUT already holds, once its manifest shows the same settings and IN has them all."""
    manifest = _read_manifest(out_dir)
    if manifest is None:
        raise CorpusInputError(f"OUT {out_dir} is not empty and was not written by tpc compress-corpus "
                               f"(no {MANIFEST_NAME}); give a new or empty directory")
    recorded = _deciding({**_SETTINGS_BEFORE_THEY_WERE_RECORDED, **manifest.get("settings", {})})
    wanted = _deciding(recorded_settings(settings))
    if recorded != wanted:
        changed = {k: (v, recorded.get(k)) for k, v in wanted.items() if recorded.get(k) != v}
        raise CorpusInputError("OUT holds rows compressed with other settings ("
                               + "; ".join(f"{k}: now {new!r}, OUT {old!r}" for k, (new, old) in changed.items())
                               + "); resume with the same options or use a new OUT")
    done = done_ids(out_dir, settings.id_field)
    unknown = done.difference(ids)
    if unknown:
        raise CorpusInputError(f"OUT holds {len(unknown)} row id(s) that IN does not have (e.g. "
                               f"{next(iter(unknown))!r}): OUT belongs to another input")
    return done
