"""The ``ray`` engine of ``tpc compress-corpus``: Ray Data reads IN, an actor pool compresses, Parquet is written.

``read_json`` / ``read_parquet`` → drop the rows already in OUT → ``materialize`` → ``map_batches`` over a
fixed pool of :class:`CorpusWorker` actors → ``write_parquet(OUT)``. Each actor builds its own compressor in
``__init__`` from the model name and options: a loaded compressor is never pickled or shipped. Ray is imported
lazily; ``pip install 'tpc-langchain[ray]'`` installs it.

When IN has no id column, rows are identified by their number in IN, which a distributed read cannot know:
the driver then reads IN, numbers the rows and hands them to Ray (IN must fit in the driver's memory; give an
id column for larger corpora).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tpc_core.corpus.io import ROW_COLUMN, CorpusInputError, CorpusPlan, CorpusSettings, open_dataset, output_schema
from tpc_core.corpus.table import compress_table, load_compressor

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["require_ray", "run_ray", "CorpusWorker", "CorpusWorkerError", "cache_failure", "gpus_per_worker"]

BLOCKS_PER_WORKER = 4  # enough blocks that every actor gets work, few enough that each batch stays full
# Reading, filtering and writing reserve no CPU: the actors may hold every CPU of a small cluster, and a read
# task waiting for a CPU an actor holds would wait forever.
IO_CPUS = 0


class CorpusWorkerError(RuntimeError):
    """A Ray actor could not build its compressor (the model or device cannot be loaded on the workers)."""


def require_ray() -> None:
    """Raise a :class:`CorpusInputError` saying how to install Ray Data when it is missing."""
    try:
        import ray
        import ray.data  # noqa: F401
    except ImportError:
        raise CorpusInputError("--engine ray needs Ray Data: pip install 'tpc-langchain[ray]'") from None


class CorpusWorker:
    """A Ray Data actor: one compressor, built here from the settings, compressing batch after batch.

    Args:
        settings: :class:`CorpusSettings` as a dict.
        schema: OUT's schema; every batch is cast to it, so all part files agree (as the local engine's do).
        batch_size: Rows per model batch.
        threads: torch threads (``--threads``, else the CPUs the actor reserved).
        device: Model device (``None``: the best available on the actor's node).
        local_files_only: Never use the network to load the model.
    """

    def __init__(self, settings: dict[str, Any], schema: pa.Schema, batch_size: int, threads: int,
                 device: str | None, local_files_only: bool) -> None:
        import torch

        torch.set_num_threads(max(1, threads))
        self.settings = CorpusSettings(**settings)
        self.schema = schema
        self.batch_size = batch_size
        self.compressor = load_compressor(self.settings, device=device, local_files_only=local_files_only)

    def __call__(self, batch: pa.Table) -> pa.Table:
        return compress_table(self.compressor, batch, self.settings, self.batch_size).cast(self.schema)


def _drop_done(batch: pa.Table, id_field: str, done: list[Any]) -> pa.Table:
    """The rows of ``batch`` whose id is not in ``done`` (a Ray Data task)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    return batch.filter(pc.invert(pc.is_in(batch.column(id_field), value_set=pa.array(done))))


def _numbered_dataset(plan: CorpusPlan, blocks: int) -> Any:
    """IN read by the driver, with a ``row`` column, in ``blocks`` blocks (rows without an id column)."""
    import pyarrow as pa
    import ray.data

    table = open_dataset(plan.files, plan.format).to_table()
    table = table.append_column(ROW_COLUMN, pa.array(range(table.num_rows), pa.int64()))
    size = max(1, -(-table.num_rows // blocks))
    return ray.data.from_arrow([table.slice(start, size) for start in range(0, table.num_rows, size)])


def gpus_per_worker(device: str | None, num_workers: int, cluster_gpus: float) -> int | None:
    """The GPUs each actor reserves: one for a CUDA ``device`` (so Ray places each actor on a GPU of its own),
    none otherwise (``None``: the best available on the actor's node, no reservation).

    Raises:
        CorpusInputError: A CUDA device and fewer GPUs in the cluster than actors: Ray would wait for them forever.
    """
    if device is None or not str(device).startswith("cuda"):
        return None
    if cluster_gpus < num_workers:
        raise CorpusInputError(f"device={device!r} gives each of the {num_workers} Ray actor(s) a GPU of its own, but "
                               f"the cluster has {cluster_gpus:g} GPU(s): pass --num-workers {int(cluster_gpus)} or "
                               "fewer, join a cluster with GPUs (--address), or use --device cpu.")
    return 1


def cache_failure(error: BaseException) -> str | None:
    """What a :class:`CacheUnavailable` raised in a Ray worker said (``--warm-cache redis://``), found in the
    error Ray Data raises in the driver, or ``None`` when the error is another one."""
    from tpc_core.cache.redis_store import CacheUnavailable

    seen: set[int] = set()
    pending: list[BaseException | None] = [error]
    while pending:
        current = pending.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, CacheUnavailable):
            return str(current)
        pending += [current.__cause__, current.__context__, getattr(current, "cause", None)]
    marker = f"{CacheUnavailable.__name__}: "
    lines = [line for line in str(error).splitlines() if marker in line]
    return lines[-1].split(marker, 1)[1].strip() if lines else None


def run_ray(plan: CorpusPlan, *, batch_size: int, num_workers: int, cpus_per_worker: float,
            address: str | None, device: str | None, local_files_only: bool, threads: int | None = None) -> None:
    """Compress the plan's pending rows with Ray Data and write them to ``plan.out_dir``.

    Connects to ``address`` (or the cluster this process already joined; otherwise starts a local one and shuts
    it down after). Files are written under OUT with Ray's own unique names. Each actor runs its model on
    ``threads`` torch threads (default: ``int(cpus_per_worker)``, at least 1).
    """
    import ray
    import ray.data

    started_here = not ray.is_initialized()
    if started_here:
        ray.init(address=address, include_dashboard=False, log_to_driver=False)
    try:
        gpus = gpus_per_worker(device, num_workers, ray.cluster_resources().get("GPU", 0))  # before any read
        settings = plan.settings
        blocks = num_workers * BLOCKS_PER_WORKER
        paths = [str(p) for p in plan.files]
        if settings.id_column is None:
            dataset = _numbered_dataset(plan, blocks)
        elif plan.format == "jsonl":
            dataset = ray.data.read_json(paths, override_num_blocks=blocks, num_cpus=IO_CPUS)
        else:
            dataset = ray.data.read_parquet(paths, override_num_blocks=blocks, num_cpus=IO_CPUS)
        if plan.done:
            dataset = dataset.map_batches(_drop_done, batch_format="pyarrow", num_cpus=IO_CPUS,
                                          fn_kwargs={"id_field": settings.id_field, "done": sorted(plan.done)})
        # Read (and drop the done rows) before any actor starts: an actor pool holding every CPU of the cluster
        # would otherwise starve the read tasks, which need one (Ray Data's file listing asks for a CPU whatever
        # the read's own num_cpus). The rows wait in Ray's object store, spilled to disk when large.
        dataset = dataset.materialize()
        dataset = dataset.map_batches(
            CorpusWorker, batch_size=batch_size, batch_format="pyarrow",
            compute=ray.data.ActorPoolStrategy(size=num_workers),
            fn_constructor_kwargs={"settings": settings.to_dict(), "schema": output_schema(plan.schema, settings),
                                   "batch_size": batch_size, "threads": threads or max(1, int(cpus_per_worker)),
                                   "device": device,
                                   "local_files_only": local_files_only},
            num_cpus=cpus_per_worker, num_gpus=gpus)
        failure = None
        try:
            dataset.write_parquet(str(plan.out_dir), ray_remote_args={"num_cpus": IO_CPUS})
        except ray.exceptions.ActorDiedError as error:  # __init__ failed: a bad --model or --device, say which
            reason = str(error).strip().splitlines()[-1]
            raise CorpusWorkerError(f"a Ray worker could not build its compressor: {reason}") from error
        except Exception as error:
            failure = cache_failure(error)
            if failure is None:
                raise
        if failure is not None:
            import gc

            from tpc_core.cache.redis_store import CacheUnavailable

            dataset = None
            gc.collect()
            # Raised outside the except clause, Ray's error not chained: its traceback holds the failed dataset,
            # whose actors would keep their CPUs (and a resume in the same cluster would wait for them forever).
            raise CacheUnavailable(f"{failure}. Every row in OUT has its entry stored; start the server again and run "
                                   "the same command to resume")
    finally:
        if started_here:
            ray.shutdown()
