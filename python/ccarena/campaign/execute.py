"""Running a campaign's runs: on a local pool of worker processes, or on a Dask cluster.

Each run is one task, :func:`execute`: it runs the experiment and writes its
result folder into the store (whole, then renamed), and returns the summary
or the error. A task never raises: an engine error, or an experiment found
invalid late, comes back as a failed outcome and the campaign goes on. A
worker that dies takes with it the runs its pool had not finished; they
are run again one at a time, and only a run that kills its worker again
fails (:func:`run_local`).

* ``local``: a pool of long-lived worker processes (one per core by
  default), each importing ccarena once. Workers ignore SIGINT; on Ctrl-C
  the parent stops dispatching and kills them at once (what they were
  writing was a hidden temporary folder, removed at the next start), so
  the campaign stops within a fraction of a second.
* ``dask``: tasks go to a ``dask.distributed`` cluster: a LocalCluster of
  ``jobs`` single-threaded worker processes, or the running scheduler at
  ``scheduler``. Workers write the run folders themselves, so with a remote
  cluster the output folder must be on a filesystem the workers share with
  the client.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..spec import Spec

__all__ = ["Outcome", "Task", "execute", "run_dask", "run_local"]


@dataclass(frozen=True)
class Task:
    """One run to execute: where its folder goes and how it runs."""

    run_id: str
    spec: Spec
    out: str
    figure: bool
    backend: str


@dataclass(frozen=True)
class Outcome:
    """What a task returns: the summary (ok) or the error (failed), and its wall time."""

    run_id: str
    ok: bool
    summary: dict[str, Any] | None
    error: str | None
    wall_s: float


def execute(task: Task) -> Outcome:
    """Runs one task; never raises (a failure is an outcome)."""
    from ..runner import run

    t0 = time.perf_counter()
    try:
        result = run(task.spec, out=task.out, figure=task.figure, backend=task.backend)
    except Exception as e:  # every failure of one run is recorded, the campaign goes on
        message = str(e) or type(e).__name__
        return Outcome(task.run_id, False, None, f"{type(e).__name__}: {message}", time.perf_counter() - t0)
    except BaseException as e:
        # A panic of the engine (pyo3's PanicException is a BaseException) fails
        # this run only; Ctrl-C and exits still end the worker.
        if type(e).__name__ != "PanicException":
            raise
        return Outcome(task.run_id, False, None, f"engine panic: {e}", time.perf_counter() - t0)
    return Outcome(task.run_id, True, result.summary, None, time.perf_counter() - t0)


def _init_worker() -> None:
    """A worker ignores Ctrl-C (the parent decides) and imports ccarena's run path once."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    from .. import runner  # noqa: F401
    from ..results import result  # noqa: F401


def _crashed(task: Task, what: str) -> Outcome:
    return Outcome(task.run_id, False, None, what, 0.0)


def run_local(
    tasks: Sequence[Task],
    jobs: int,
    on_outcome: Callable[[Outcome], None],
    *,
    in_process: bool = False,
    say: Callable[[str], None] | None = None,
) -> None:
    """Runs the tasks on ``jobs`` worker processes, calling ``on_outcome`` as each finishes.

    A worker that dies takes the pool with it, and with it every run the
    pool had not finished; those runs are run again one at a time, each in
    a pool of its own, so that only a run that kills its worker fails (and
    a worker killed from outside, by the kernel's out-of-memory killer say,
    costs nothing); ``say`` is told. The rest go on in a new pool.
    KeyboardInterrupt propagates after the workers are killed. With
    ``in_process`` the tasks run one after another in this process (the
    emulator, which handles its own signals and needs the machine to itself).
    """
    if in_process:
        for task in tasks:
            on_outcome(execute(task))
        return
    context = _context()
    pending = list(reversed(tasks))
    while pending:
        lost = _run_pool(pending, jobs, context, on_outcome)
        if not lost:
            continue
        if say is not None:
            say(
                f"warning: a worker process died; the {len(lost)} run(s) it took with it run again, "
                "one at a time, so that only a run that kills its worker fails"
            )
        for task in lost:
            if _run_pool([task], 1, context, on_outcome):
                on_outcome(_crashed(task, "the worker process died running it (a crash, or the process was killed)"))


def _run_pool(pending: list[Task], jobs: int, context: Any, on_outcome: Callable[[Outcome], None]) -> list[Task]:
    """Runs tasks taken from the end of ``pending`` on a new pool until none are
    left or a worker dies; returns the tasks the pool lost when one did."""
    from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
    from concurrent.futures.process import BrokenProcessPool

    pool = ProcessPoolExecutor(max_workers=jobs, mp_context=context, initializer=_init_worker)
    running: dict[Future[Outcome], Task] = {}
    lost: list[Task] = []
    try:
        while pending or running:
            while pending and len(running) < 2 * jobs and not lost:
                task = pending.pop()
                running[pool.submit(execute, task)] = task
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for fut in done:
                task = running.pop(fut)
                try:
                    outcome = fut.result()
                except BrokenProcessPool:
                    lost.append(task)
                    continue
                on_outcome(outcome)
            if lost and not running:
                break
    except BaseException:
        _kill(pool)
        raise
    pool.shutdown(wait=True)
    return lost


def _context() -> Any:
    """The fork server (workers start from a clean process that imported ccarena once), or plain
    fork when the main program cannot be imported again (a script read from standard input)."""
    import multiprocessing
    import sys

    main_file = getattr(sys.modules.get("__main__"), "__file__", None)
    if main_file is not None and not os.path.exists(main_file):
        return multiprocessing.get_context("fork")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["ccarena.runner", "ccarena.results.result"])
    return context


def _kill(pool: Any) -> None:
    """Kills a process pool's workers at once (they hold nothing that must be finished)."""
    processes = list(getattr(pool, "_processes", {}).values())
    for p in processes:
        try:
            os.kill(p.pid, signal.SIGKILL)
        except (ProcessLookupError, AttributeError, TypeError):
            pass
    pool.shutdown(wait=False, cancel_futures=True)


def run_dask(
    tasks: Sequence[Task], jobs: int, scheduler: str | None, on_outcome: Callable[[Outcome], None]
) -> None:
    """Runs the tasks on a Dask cluster (a LocalCluster of ``jobs`` workers, or ``scheduler``)."""
    try:
        from dask.distributed import Client, LocalCluster, as_completed
    except ImportError:
        raise RuntimeError(
            "the dask executor needs dask.distributed: pip install 'ccarena[dask]'"
        ) from None
    cluster = None
    if scheduler is None:
        cluster = LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True, dashboard_address=None)
        client = Client(cluster)
    else:
        client = Client(scheduler)
    try:
        futures = [client.submit(execute, t, key=f"ccarena-{Path(t.out).name}", pure=False) for t in tasks]
        by_key = {f.key: t for f, t in zip(futures, tasks, strict=True)}
        for fut in as_completed(futures):
            try:
                on_outcome(fut.result())
            except Exception as e:  # a worker lost with its task
                on_outcome(_crashed(by_key[fut.key], f"dask: {type(e).__name__}: {e}"))
    finally:
        client.close()
        if cluster is not None:
            cluster.close()

