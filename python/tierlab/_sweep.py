"""Sweeps: every point of an experiment, run on Dask, kept in a results store.

The driver (this process) expands the experiment, leaves out the points
the store already holds, submits the rest to Dask and writes each result
to the store as it arrives. A sweep of at most ``IN_PROCESS_POINTS``
points runs in this process, on Dask's threaded scheduler (the engine
releases the GIL): a local cluster of worker processes takes seconds to
start, longer than a few small points take. A larger one runs on a local
cluster sized to the machine, or on an existing cluster by address. Workers only simulate: the
store has one writer, and a point is committed the moment it is done, so
a killed sweep loses only the points that were running.

The module is ``tierlab._sweep``, not ``tierlab.sweep``: the package loads
its public names lazily, and importing a submodule named ``sweep`` would set
the package's ``sweep`` attribute to the module, hiding the function
``tierlab.sweep``.
"""

from __future__ import annotations

import difflib
import json
import logging
import os
import re
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tierlab.config import ConfigLike
from tierlab.errors import ConfigError, StoreError
from tierlab.experiment import Experiment, Point, load_experiment
from tierlab.store import Store, flatten, pending

if TYPE_CHECKING:
    from types import FrameType

    from distributed import Client

#: ``progress(done, failed, total)``: points finished (failed included),
#: failed, and to run in this sweep.
SweepProgress = Callable[[int, int, int], object]

_UNKNOWN_METRIC = "experiment.metrics: "
_PER_CLIENT = "time.per_client."
#: Summary paths an unknown-metric error lists (a summary has 60 and more).
_PATHS_SHOWN = 24

#: Sweeps with at most this many points to run, and no scheduler address,
#: run in this process on Dask's threaded scheduler, without starting a
#: cluster (docs/experiments.md). Starting a local cluster of worker
#: processes took 3-6 s on the 2-core development machine, as long as eight
#: of the examples' points.
IN_PROCESS_POINTS = 8

#: A local cluster with no worker for this many seconds, points still to
#: run, ends its sweep. Dask's nanny restarts a worker process that exits;
#: a restart that fails (on a machine too loaded to start one in time, say)
#: leaves the cluster without it, and a sweep whose workers were all lost
#: waited forever, idle (a full-scale `tierlab reproduce s1` at load 9).
WORKERLESS_S = 60.0
#: How often the driver asks the local cluster for its workers.
_POLL_S = 2.0


class _Stopped(Exception):
    """Raised by an in-process point's progress callback when the sweep
    stops (Ctrl-C, a misspelt metric): the engine checks it every million
    requests."""


class _StopSweep(Exception):
    """The driver stops the sweep (a misspelt metric at the first point)."""


class MetricWarning(UserWarning):
    """A named metric looks misspelt: the first finished point's summary
    lacks it but has a path that differs by a letter or two. Only a warning:
    a metric may belong to some points only (a pool switched off at one)."""


@dataclass
class SweepReport:
    """What a sweep did.

    Attributes
    ----------
    total
        Points of the experiment.
    skipped
        Already in the store with a result (not run again).
    done
        Run now and succeeded.
    failed
        Run now and failed (each recorded with its error).
    store
        The results file.
    """

    experiment: str
    total: int
    skipped: int
    done: int
    failed: int
    store: Path
    errors: list[str]


def run_point(
    config: dict[str, Any],
    metrics: list[str] | None,
    keep_timeline: bool,
    stop: threading.Event | None = None,
) -> dict[str, Any]:
    """Runs one point (on a Dask worker, or a thread of this process);
    never raises for a bad point. ``stop`` (in this process only): the run
    ends at its next million requests once it is set.

    Returns ``status`` (``"ok"`` or ``"error"``), ``error``, ``metrics``
    (the kept summary fields), ``timeline`` and ``elapsed_s``.
    """
    from tierlab.api import simulate
    from tierlab.errors import TierlabError

    def check(_done: int, _total: int | None) -> None:
        if stop is not None and stop.is_set():
            raise _Stopped

    t0 = time.perf_counter()
    try:
        r = simulate(config, progress=None if stop is None else check)
    except TierlabError as e:
        return {"status": "error", "error": str(e), "elapsed_s": time.perf_counter() - t0}
    except MemoryError:
        return {"status": "error", "error": "out of memory", "elapsed_s": time.perf_counter() - t0}
    flat = flatten(r.summary)
    if metrics is None:
        # Every whole-run figure (the time model's too: latency_ns.p99,
        # time.queue_ns, time.stations.0.utilization, ...), but not one
        # column set per client: a sweep over load.clients would grow the
        # store by four columns per client. Name them in metrics to keep them.
        kept: dict[str, Any] = {k: v for k, v in flat.items() if not k.startswith(_PER_CLIENT)}
    else:
        # A path this run's summary lacks is left out of its row (NULL in
        # tierlab.load): a sweep's points need not all have the same
        # figures (a pool that is switched off has no `memorage` object, a
        # run with fewer tiers no `tiers.2`). The driver calls a path
        # unknown only when no point of the sweep has it.
        kept = {m: flat[m] for m in metrics if m in flat}
    return {
        "status": "ok",
        "error": None,
        "metrics": kept,
        "paths": None if metrics is None or len(kept) == len(metrics) else sorted(flat),
        "timeline": r.timeline_data if keep_timeline else None,
        "elapsed_s": time.perf_counter() - t0,
    }


@contextmanager
def client_for(
    scheduler: str | None, workers: int | None, points: int | None = None
) -> Iterator[Client]:
    """A Dask client: of an existing cluster (``scheduler`` address), or of a
    local cluster of ``workers`` single-threaded processes (default: one per
    core, and no more than ``points``) that is shut down afterwards."""
    from distributed import Client, LocalCluster

    if scheduler is not None:
        try:
            client = Client(scheduler, timeout="10s")
        except (OSError, TimeoutError) as e:
            raise ConfigError(
                f"--scheduler {scheduler}: cannot reach a Dask scheduler there ({e})"
            ) from None
        try:
            yield client
        finally:
            client.close()
        return
    n = workers or os.cpu_count() or 1
    if points is not None:
        n = max(1, min(n, points))
    with _sigint_ignored():
        cluster = LocalCluster(
            n_workers=n,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
            # No dashboard, but the scheduler still serves HTTP (health,
            # metrics): on a free port of its own, not on 8787, which another
            # cluster may hold (Dask then warns that the port is in use).
            scheduler_kwargs={"dashboard": False, "dashboard_address": "127.0.0.1:0"},
            # Dask's own logs (a worker's heartbeat failing while the cluster
            # shuts down, say) are not the user's business: a point that fails
            # is reported with its error instead.
            silence_logs=logging.CRITICAL,
        )
    try:
        client = Client(cluster)
        try:
            yield client
        finally:
            client.close()
    finally:
        cluster.close()


@contextmanager
def _sigint_ignored() -> Iterator[None]:
    """SIGINT ignored while the local cluster starts its worker processes,
    which inherit the ignore across exec (a handler would be reset): Ctrl-C
    in a terminal signals the whole process group, and only this process,
    the client, should act on it, by closing the cluster; a worker that
    took it would print its KeyboardInterrupt traceback. A Ctrl-C during
    the cluster's start is lost (it takes a second or two)."""
    import signal

    if threading.current_thread() is not threading.main_thread():
        yield  # signal handlers can only be set from the main thread
        return
    old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)


def sweep(
    experiment: ConfigLike | Experiment,
    *,
    store: str | os.PathLike[str] | None = None,
    scheduler: str | None = None,
    workers: int | None = None,
    progress: SweepProgress | None = None,
    overrides: Mapping[str, Any] | None = None,
    dry_run: bool = False,
    notice: Callable[[str], object] | None = None,
    in_process: bool | None = None,
) -> SweepReport:
    """Runs every point of an experiment not yet in its results store.

    Parameters
    ----------
    experiment
        An experiment file (path), its TOML text or a dict (docs/experiments.md),
        or an already loaded ``Experiment``.
    store
        The SQLite results file (default: the experiment's ``store``,
        ``<name>.sqlite``). Points already there with a result are skipped;
        points that failed before are run again.
    scheduler
        Address of an existing Dask scheduler (``tcp://host:8786``); by
        default a sweep of at most ``IN_PROCESS_POINTS`` (8) points to run
        runs in this process, and a larger one on a local cluster started
        for the sweep and stopped after.
    workers
        Worker processes of the local cluster, or threads in this process
        (default: one per core).
    progress
        Called as ``progress(done, failed, total)`` as points finish.
    overrides
        Config key paths set in every point (``{"workload.scale": 0.01}``).
    dry_run
        Expand the experiment and compare it with the store, run nothing
        (``skipped`` says how many points the store holds already).
    notice
        Called with a message when the first finished point suggests a named
        metric is misspelt (its summary has a near match), so a long sweep
        can be stopped early; the sweep itself fails at its end only if no
        point has the metric. By default the message is a ``MetricWarning``.
        (A metric the first point's summary lacks where it has the object
        the metric names, ``tiers.0.hitz`` beside ``tiers.0.hits``, stops
        the sweep there with a ``ConfigError``.)
    in_process
        Run the points in this process, on Dask's threaded scheduler
        (True), or on a local cluster of worker processes (False); by
        default in this process when at most ``IN_PROCESS_POINTS`` points
        are to run. A local cluster's workers start by running the calling
        script again: called from a script's top level, outside
        ``if __name__ == "__main__":``, a sweep that needs one raises a
        ``ConfigError`` saying so before it starts anything.

    Returns
    -------
    SweepReport
    """
    from tierlab import __version__

    if workers is not None and workers < 1:
        raise ConfigError(f"workers: {workers}; must be at least 1")
    if isinstance(experiment, Experiment):
        if overrides:
            raise ConfigError("overrides apply when loading an experiment; pass its file")
        exp = experiment
    else:
        exp = load_experiment(experiment, overrides)
    path = Path(store) if store is not None else exp.store
    unique = len({p.hash for p in exp.points})
    cluster = scheduler is None and in_process is not True
    if dry_run or (cluster and in_process is None and unique > IN_PROCESS_POINTS):
        # Reads the store if there is one; creates and writes nothing.
        known: set[str] = set()
        if path.exists():
            with Store(path, create=False) as st:
                known = _reusable(st, exp, st.metric_paths(exp.name))
        elif not path.parent.is_dir():
            # The sweep itself would stop here: so does its dry run.
            raise StoreError(f"{path}: no such directory {str(path.parent)!r}")
        left = len(pending(exp.points, known))
        if dry_run:
            return SweepReport(exp.name, unique, unique - left, 0, 0, path, [])
        cluster = left > IN_PROCESS_POINTS
    elif in_process is None:
        cluster = False  # at most IN_PROCESS_POINTS points: in this process
    if cluster:
        # Before the store is created: the sweep would start a local cluster.
        _refuse_unguarded_script()
    with Store(path) as st:
        st.register(exp)
        # The named metrics some point has given: the stored points' and
        # those run now (a metric no point has is a misspelt path).
        seen = st.metric_paths(exp.name)
        todo = pending(exp.points, _reusable(st, exp, seen))
        report = SweepReport(exp.name, unique, unique - len(todo), 0, 0, path, [])
        if not todo:
            return report
        if progress is not None:
            progress(0, 0, len(todo))
        ran_ok: list[str] = []
        paths: list[str] | None = None

        def finished(p: Point, result: dict[str, Any]) -> None:
            # In this process, as each point finishes, in any order.
            nonlocal paths
            err = result.get("error")
            if result["status"] == "ok" and not ran_ok:
                stop = _misspelt_at_first(exp, seen, result)
                if stop is not None:
                    # Recorded as failed, so that the corrected experiment
                    # runs it again instead of skipping it.
                    st.add(exp.name, p, __version__, {**result, "status": "error", "error": stop})
                    raise ConfigError(stop)
            st.add(exp.name, p, __version__, result)
            if result["status"] == "ok":
                report.done += 1
                seen.update(result.get("metrics") or {})
                if not ran_ok:
                    _warn_misspelt(exp, seen, result.get("paths"), notice)
                ran_ok.append(p.hash)
                paths = paths or result.get("paths")
            else:
                report.failed += 1
                report.errors.append(f"{_describe(p.labels, p.rep)}: {err}")
            if progress is not None:
                progress(report.done + report.failed, report.failed, len(todo))

        local = in_process if in_process is not None else len(todo) <= IN_PROCESS_POINTS
        if local and scheduler is None:
            _run_in_process(exp, todo, workers, finished)
        else:
            _run_on_cluster(exp, todo, scheduler, workers, finished)
        _check_metrics(st, exp, seen, ran_ok, paths)
    return report


def _run_in_process(
    exp: Experiment,
    todo: list[Point],
    workers: int | None,
    finished: Callable[[Point, dict[str, Any]], None],
) -> None:
    """The points on Dask's threaded scheduler, ``workers`` threads (one per
    core by default), ``finished`` called in this thread as each ends. On
    Ctrl-C or an error in ``finished`` the running points stop at their next
    million requests, and nothing more starts."""
    from concurrent.futures import ThreadPoolExecutor

    import dask.threaded
    from dask.base import compute
    from dask.callbacks import Callback
    from dask.delayed import delayed

    stop = threading.Event()
    by_key = {f"tierlab-{exp.name}-{p.hash[:20]}": p for p in todo}
    tasks = [
        delayed(run_point, pure=False)(p.config, exp.metrics, exp.timeline, stop, dask_key_name=key)
        for key, p in by_key.items()
    ]

    def posttask(key: Any, result: Any, _dsk: Any, _state: Any, _id: Any) -> None:
        if key in by_key:
            finished(by_key[key], result)

    n = max(1, min(workers or os.cpu_count() or 1, len(todo)))
    pool = ThreadPoolExecutor(n, thread_name_prefix="tierlab-point")
    try:
        with Callback(posttask=posttask):
            # The scheduler as a function, not by name: named, dask looks
            # for a distributed client first and imports distributed (1-3 s).
            compute(*tasks, scheduler=dask.threaded.get, pool=pool)
    finally:
        stop.set()
        pool.shutdown(wait=True, cancel_futures=True)


def _run_on_cluster(
    exp: Experiment,
    todo: list[Point],
    scheduler: str | None,
    workers: int | None,
    finished: Callable[[Point, dict[str, Any]], None],
) -> None:
    """The points on a Dask cluster (an existing one, or a local one started
    and stopped here), ``finished`` called in this thread as each ends. A
    local cluster left without a worker for ``WORKERLESS_S`` seconds ends
    the sweep: its points not run are reported failed (the next sweep of
    the store runs them), where Dask would wait for a worker forever."""
    from distributed import as_completed

    with client_for(scheduler, workers, len(todo)) as client:
        futures = {}
        for p in todo:
            f = client.submit(
                run_point,
                p.config,
                exp.metrics,
                exp.timeline,
                key=f"tierlab-{exp.name}-{p.hash[:20]}",
                pure=False,
            )
            futures[f.key] = (f, p)
        # Polled, not waited on: Dask's iterator blocks until a point ends,
        # which on a cluster left without workers is never.
        ac = as_completed([f for f, _ in futures.values()])
        pending = set(futures)
        looked = time.monotonic()
        workerless_since: float | None = None
        try:
            while pending:
                if ac.has_ready():
                    for f in ac.next_batch(block=False):
                        _, p = futures[f.key]
                        try:
                            result = f.result()
                        except Exception as e:  # a worker died or the cluster failed
                            result = {"status": "error", "error": f"{type(e).__name__}: {e}"}
                        pending.discard(f.key)
                        finished(p, result)
                    continue
                time.sleep(0.05)
                now = time.monotonic()
                if scheduler is not None or now - looked < _POLL_S:
                    continue
                looked = now
                if client.nthreads():
                    workerless_since = None
                elif workerless_since is None:
                    workerless_since = now
                elif now - workerless_since >= WORKERLESS_S:
                    left = [futures[k] for k in futures if k in pending]
                    client.cancel([f for f, _ in left])
                    lost = (
                        f"the local Dask cluster had no worker for {WORKERLESS_S:g} s "
                        "(each worker process exited and none was restarted); run the "
                        "sweep again to run this point"
                    )
                    for _, p in left:
                        finished(p, {"status": "error", "error": lost})
                    return
        except BaseException:
            client.cancel([f for f, _ in futures.values()])
            raise


def _refuse_unguarded_script() -> None:
    """Raises ConfigError when the sweep was called from a script's top
    level outside ``if __name__ == "__main__":``: a local cluster's worker
    processes start by running the script again (multiprocessing's spawn),
    which calls the sweep again, and Dask ended in "Nanny failed to start"
    and a 150-line traceback."""
    import ast
    import sys

    path = getattr(sys.modules.get("__main__"), "__file__", None)
    frame: FrameType | None = sys._getframe(1)
    line = None
    while frame is not None:  # the outermost frame of the script's top level
        if frame.f_code.co_name == "<module>" and frame.f_globals.get("__name__") == "__main__":
            line = frame.f_lineno
        frame = frame.f_back
    if path is None or line is None:
        return
    try:
        tree = ast.parse(Path(path).read_text(encoding="utf-8"), path)
    except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
        return
    for node in tree.body:
        if (
            isinstance(node, ast.If)
            and node.lineno <= line <= (node.end_lineno or node.lineno)
            and "__name__" in ast.unparse(node.test)
        ):
            return
    raise ConfigError(
        f"{path}:{line}: tierlab.sweep() is called outside 'if __name__ == \"__main__\":', "
        "and the local cluster's worker processes would run this script again; "
        "hint: put the call under that guard, or pass in_process=True"
    )


def _check_metrics(
    st: Store, exp: Experiment, seen: set[str], ran_ok: list[str], paths: list[str] | None
) -> None:
    """Fails the sweep when a named metric is in no point's summary (a
    misspelt path): the points run now are recorded as failed with that
    error, so that running the corrected experiment runs them again instead
    of skipping them with the metric missing."""
    if exp.metrics is None or not ran_ok:
        return
    unknown = [m for m in exp.metrics if m not in seen]
    if not unknown:
        return
    near = [f"{m!r} (did you mean {c!r}?)" for m in unknown if (c := _near(m, paths))]
    err = (
        f"{_UNKNOWN_METRIC}unknown {', '.join(map(repr, unknown))}; "
        + (f"{'; '.join(near)}; " if near else "")
        + f"a run's summary has {', '.join(paths or [])}"
    )
    st.fail(exp.name, ran_ok, err)
    raise ConfigError(err)


def _reusable(st: Store, exp: Experiment, kept: set[str]) -> set[str]:
    """The stored points this sweep need not run again: those with a
    result, unless the experiment names a metric that no stored point kept
    (``kept``: added to the experiment, or corrected, after they ran; the
    store keeps only named metrics, so they must run again to have it)."""
    done = st.finished(exp.name, failed_too=False)
    if done and exp.metrics is not None and any(m not in kept for m in exp.metrics):
        return set()
    return done


def _near(metric: str, paths: list[str] | None) -> str | None:
    """The summary path closest to ``metric`` when it differs by a letter or
    two (difflib's ratio of at least 0.85), else None. A path that differs
    only in its numbers (``tiers.1.hits`` against ``tiers.0.hits``) is no
    misspelling: a point with fewer tiers or stations lacks the other."""
    shape = re.sub(r"\d+", "#", metric)
    for c in difflib.get_close_matches(metric, paths or [], n=3, cutoff=0.85):
        if re.sub(r"\d+", "#", c) != shape:
            return c
    return None


def _misspelt_at_first(exp: Experiment, seen: set[str], result: dict[str, Any]) -> str | None:
    """The error that stops the sweep at its first finished point, or None:
    a named metric that point lacks although its summary has the object the
    metric names (``tiers.0.hitz`` beside ``tiers.0.hits``, ``miss_rate``
    beside the top-level figures), and not a path of the same shape with
    other indices (``tiers.1.hits``: a point with one tier lacks it). A
    metric under an object the point lacks (``memorage.borrows`` where the
    pool is off) may belong to other points: it is checked at the end."""
    if exp.metrics is None:
        return None
    have: list[str] = result.get("paths") or []
    if not have:
        return None
    shapes = {re.sub(r"\d+", "#", h) for h in have}
    parents = {h.rsplit(".", 1)[0] for h in have if "." in h}
    bad = []
    for m in exp.metrics:
        if m in seen or m in have or re.sub(r"\d+", "#", m) in shapes:
            continue
        parent = m.rsplit(".", 1)[0] if "." in m else None
        if parent is None or parent in parents:
            bad.append(m)
    if not bad:
        return None
    near = [f"{m!r} (did you mean {c!r}?)" for m in bad if (c := _near(m, have))]
    if near:
        return (
            f"{_UNKNOWN_METRIC}unknown {', '.join(map(repr, bad))} in the first finished "
            f"point's summary; {'; '.join(near)}; the sweep stopped there"
        )
    # The whole-run figures first, then those of tiers and devices.
    have = sorted(have, key=lambda h: (h.count("."), h))
    shown = ", ".join(have[:_PATHS_SHOWN])
    if len(have) > _PATHS_SHOWN:
        shown += f", ... ({len(have) - _PATHS_SHOWN} more)"
    return (
        f"{_UNKNOWN_METRIC}unknown {', '.join(map(repr, bad))} in the first finished "
        f"point's summary; the sweep stopped there; a run's summary has {shown}"
    )


def _warn_misspelt(
    exp: Experiment,
    seen: set[str],
    paths: list[str] | None,
    notice: Callable[[str], object] | None,
) -> None:
    """At the first finished point: the named metrics its summary lacks and
    that have a near match in it, said at once instead of after the sweep.
    A metric without a near match says nothing here: it may be one that only
    other points have."""
    if exp.metrics is None or paths is None:
        return
    near = [(m, c) for m in exp.metrics if m not in seen and (c := _near(m, paths))]
    if not near:
        return
    msg = (
        f"{_UNKNOWN_METRIC}"
        + "; ".join(
            f"{m!r} is not in the first finished point's summary, which has {c!r}" for m, c in near
        )
        + ". The sweep goes on, and fails at its end if no point has it: stop it and "
        "correct the experiment"
    )
    if notice is not None:
        notice(msg)
    else:
        warnings.warn(msg, MetricWarning, stacklevel=3)


def _describe(labels: dict[str, Any], rep: int) -> str:
    parts = [f"{k}={json.dumps(v) if not isinstance(v, str) else v}" for k, v in labels.items()]
    return ", ".join(parts + [f"rep={rep}"])
