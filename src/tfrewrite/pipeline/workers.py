"""The rule workers: a process pool, forked where the platform allows from a
small server process that has loaded only LibCST and the rules, started with
a clean `sys.path` from a neutral folder (a project's top-level `random/` or
`types.py` must not shadow the standard library in a worker), and stopped
with the run: interrupted, terminated, or when the main process dies.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager

# Below this many files a process pool costs more than it saves.
PARALLEL_THRESHOLD = 16


def map_in_workers(
    func: Callable,
    items: list,
    jobs: int,
    lost: Callable,
    progress: Callable[[int], None] | None = None,  # type: ignore[type-arg]
    chunksize: int | None = None,
    fresh: bool = False,
) -> list:  # type: ignore[type-arg]
    """`map` over a process pool when there is enough work, in order;
    `progress(1)` after each item. Without `chunksize`, items go in chunks
    sized for many small, even items. Workers are forks of this process
    where the platform has `fork`; with `fresh`, forks of a small server
    process that has loaded only the rules (`fresh_context`). When a
    worker dies (killed, out of memory), the items without a result yet
    get `lost(item)`; when this process is interrupted, the workers are
    stopped before the interruption goes on (`_stop_workers`)."""
    tick = progress or (lambda n: None)
    if jobs <= 1 or len(items) < PARALLEL_THRESHOLD:
        results = []
        for item in items:
            results.append(func(item))
            tick(1)
        return results
    import multiprocessing

    context = fresh_context() if fresh else None
    if context is None and hasattr(os, "fork"):
        context = multiprocessing.get_context("fork")
    if chunksize is None:
        chunksize = max(1, min(16, len(items) // (jobs * 8)))
    results = []
    _start_helpers(fresh=context is not None and context.get_start_method() == "forkserver")
    # What the main process holds is frozen before the workers fork: their
    # garbage collector then never walks (nor copies, page by page) it. A
    # program that froze objects itself keeps them frozen.
    freeze = gc.get_freeze_count() == 0
    if freeze:
        gc.freeze()
    try:
        pool = ProcessPoolExecutor(
            max_workers=jobs,
            mp_context=context,
            initializer=_worker_setup,
            initargs=(os.getpid(),),
        )
        try:
            with _signals_held():
                outcomes = pool.map(func, items, chunksize=chunksize)
            for outcome in outcomes:
                results.append(outcome)
                tick(1)
        except (BrokenProcessPool, EOFError, ConnectionError):
            # A worker died, or the fork server could not start one.
            results.extend(lost(item) for item in items[len(results) :])
        except BaseException:
            with _quiet_cancelled_work():
                _stop_workers(pool)
                pool.shutdown(wait=True, cancel_futures=True)
            raise
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
    finally:
        if freeze:
            gc.unfreeze()
    return results


@contextmanager
def _quiet_cancelled_work() -> Iterator[None]:
    """Interrupted, `map` cancels the work still queued before the workers
    are stopped; the pool's manager thread then finds them gone and, on
    Python before 3.12, dies trying to mark that cancelled work broken
    (`InvalidStateError`), printing a traceback. Only that error of that
    thread is silenced, and only while the pool shuts down."""
    import threading
    from concurrent.futures import InvalidStateError

    previous = threading.excepthook

    def hook(args: threading.ExceptHookArgs) -> None:
        if not isinstance(args.exc_value, InvalidStateError):
            previous(args)

    threading.excepthook = hook
    try:
        yield
    finally:
        threading.excepthook = previous


def _stop_workers(pool: ProcessPoolExecutor) -> None:
    """Terminate the pool's workers now: interrupted, this process must not
    wait for the files they are on, nor for the ones queued behind them,
    and must leave no worker behind. (`ProcessPoolExecutor` offers no
    public way before Python 3.14.)"""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    for process in processes:
        if process.is_alive():
            process.terminate()
    for process in processes:
        process.join(timeout=5)


def _worker_setup(parent: int) -> None:
    """Run in each rule worker as it starts. Ctrl-C reaches every process of
    the terminal's process group: the workers ignore it (the main process
    stops them), so no worker prints a `KeyboardInterrupt` traceback. And
    a worker exits when the main process is gone (killed, so unable to
    stop it): otherwise it would wait for work forever, and keep the fork
    server and the resource tracker alive with it."""
    import signal
    import threading

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # A forked worker inherits this process's handler (which would raise in
    # the worker) and its mask (held by `_signals_held`): `terminate` must
    # end it at once.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
    threading.Thread(
        target=exit_with_process, args=(parent,), name="tfrewrite-parent-watch", daemon=True
    ).start()


# Seconds between two looks at whether the main process still runs, where
# the system cannot say when a process ends (no `pidfd_open`).
PARENT_POLL_SECONDS = 1.0


def exit_with_process(parent: int) -> None:
    """Exit this process as soon as process `parent` has ended (blocks: run
    it in a daemon thread)."""
    import select
    import time

    try:
        handle = os.pidfd_open(parent)  # type: ignore[attr-defined]
    except (AttributeError, OSError):
        handle = None
    if handle is not None:
        select.select([handle], [], [])  # readable once the process has ended
        os._exit(1)
    while True:
        time.sleep(PARENT_POLL_SECONDS)
        try:
            os.kill(parent, 0)
        except ProcessLookupError:
            os._exit(1)
        except PermissionError:
            pass  # it runs (as another user: a reused number)


# A folder where `import random` can only find the standard library's own
# `random`: the standard library's folder itself.
_NEUTRAL_DIR = os.path.dirname(os.__file__)


@contextmanager
def _signals_held() -> Iterator[None]:
    """Hold SIGINT and SIGTERM back while the pool starts its workers
    (`map` submits every item, starting workers as it goes): interrupted
    between starting a worker and recording it, this process could not stop
    it, and the worker, still reading its start-up data, would find the
    pool's semaphores gone and print a traceback. A signal that came
    meanwhile is handled as the block ends."""
    import signal

    if not hasattr(signal, "pthread_sigmask"):  # Windows
        yield
        return
    held = {signal.SIGINT, signal.SIGTERM}
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


@contextmanager
def _neutral_start() -> Iterator[None]:
    """Start helper processes that no module of the user's project can
    reach. `multiprocessing` starts its resource tracker and fork server
    with `python -c`, which puts the working directory first on their
    `sys.path`: run inside a project with a top-level `random/` or
    `types.py`, their first `import tempfile` loaded the project's module and
    every worker died. Here they start with `PYTHONSAFEPATH` set (Python
    3.11+: no such entry at all) and, for older Pythons, from the standard
    library's own folder. The workers themselves take the main process's
    `sys.path` and working directory (file paths are relative to it).

    They also start with SIGINT ignored, which a process keeps across
    `exec`: the fork server then hands that on to every worker from its
    first instruction, so Ctrl-C (sent to the whole process group) never
    makes a starting worker print a `KeyboardInterrupt` traceback; this
    process stops them itself."""
    import signal
    import threading

    try:
        here: str | None = os.getcwd()
    except OSError:  # removed meanwhile: nothing relative to it can be read anyway
        here = None
    previous = os.environ.get("PYTHONSAFEPATH")
    main_thread = threading.current_thread() is threading.main_thread()
    interrupt = signal.signal(signal.SIGINT, signal.SIG_IGN) if main_thread else None
    os.environ["PYTHONSAFEPATH"] = "1"
    os.chdir(_NEUTRAL_DIR)
    try:
        yield
    finally:
        if here is not None:
            os.chdir(here)
        if previous is None:
            os.environ.pop("PYTHONSAFEPATH", None)
        else:
            os.environ["PYTHONSAFEPATH"] = previous
        if interrupt is not None:
            signal.signal(signal.SIGINT, interrupt)


def _start_helpers(fresh: bool) -> None:
    """Start the resource tracker (every pool's queues register with it)
    and, for `fresh` workers, the fork server, from a neutral place
    (`_neutral_start`); started already, they are left as they are."""
    if os.name != "posix":  # the helpers and their `python -c` are POSIX's
        return
    from multiprocessing import resource_tracker

    with _neutral_start():
        resource_tracker.ensure_running()
        if fresh:
            from multiprocessing import forkserver

            forkserver.ensure_running()


def fresh_context():  # noqa: ANN202 - a multiprocessing context, or None
    """A `forkserver` context whose server has imported LibCST and the rules
    and nothing else: rule workers forked from it do not carry the main
    process's copy of every file's index (tens of MB in a large project),
    which a fork would count in each worker's memory. Only for a process
    that runs tfrewrite's own entry point (`run(fresh_workers=True)`, as the
    command line does): the server imports the main script again, which a
    user's unguarded script would not survive. None where there is no
    `forkserver`."""
    import multiprocessing

    if "forkserver" not in multiprocessing.get_all_start_methods():
        return None
    from tfrewrite.rules import RULE_MODULES

    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["libcst", "tfrewrite.pipeline.fix_rounds", *RULE_MODULES])
    return context


def start_fresh_server() -> None:
    """Start the server of `fresh_context` now. Its imports (LibCST and the
    rules, a few tenths of a second) then run on a core that the project
    facts, computed in this process alone, leave idle, instead of delaying
    the first rule worker."""
    if fresh_context() is not None:
        _start_helpers(fresh=True)
