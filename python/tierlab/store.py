"""The results store: one SQLite file, one row per experiment point.

A row is keyed by the experiment's name and the point's hash (a hash of
its full resolved config, see ``tierlab.experiment.point_hash``) and holds
the point's axis labels, config, tierlab's version, the kept metrics, the
timeline when asked for, timing, and the error of a failed run. Each
finished point is committed on its own, so a killed sweep loses only the
points that were still running; running it again skips the rest.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tierlab._atomic import atomic_path
from tierlab._frames import renamed
from tierlab.config import column_name
from tierlab.errors import StoreError

if TYPE_CHECKING:
    import pandas as pd

    from tierlab.experiment import Experiment, Point

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS experiments (
    name TEXT PRIMARY KEY,
    spec TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS runs (
    experiment TEXT NOT NULL,
    hash TEXT NOT NULL,
    point INTEGER NOT NULL,
    labels TEXT NOT NULL,
    rep INTEGER NOT NULL,
    seed INTEGER,
    config TEXT NOT NULL,
    version TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('ok', 'error')),
    error TEXT,
    metrics TEXT,
    timeline TEXT,
    elapsed_s REAL,
    finished_at TEXT NOT NULL,
    PRIMARY KEY (experiment, hash)
);
"""


def flatten(summary: dict[str, Any]) -> dict[str, float | int | None]:
    """Every numeric field of a run summary under a dotted path:
    ``miss_ratio``, ``backing.reads``, ``tiers.0.hits``. A figure the run
    cannot give (null: a tier's ``cost_usd`` when the catalog has no price,
    or any area or cost when capacities count objects) is kept as None, so
    that a sweep asking for it stores "unknown" rather than failing.

    >>> flatten({"requests": 4, "fill": "exclusive", "tiers": [{"hits": 3, "cost_usd": None}]})
    {'requests': 4, 'tiers.0.hits': 3, 'tiers.0.cost_usd': None}
    """
    out: dict[str, float | int | None] = {}

    def walk(prefix: str, v: Any) -> None:
        if v is None:
            out[prefix] = None
            return
        if isinstance(v, bool) or isinstance(v, str):
            return
        if isinstance(v, int | float):
            out[prefix] = v
        elif isinstance(v, dict):
            for k, x in v.items():
                walk(f"{prefix}.{k}" if prefix else k, x)
        elif isinstance(v, list):
            for i, x in enumerate(v):
                walk(f"{prefix}.{i}", x)

    walk("", summary)
    return out


def now_iso() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


class Store:
    """A results store on disk (created when absent).

    Examples
    --------
    >>> import tempfile, os
    >>> s = Store(os.path.join(tempfile.mkdtemp(), "r.sqlite"))
    >>> s.finished("demo")
    set()
    """

    def __init__(self, path: str | os.PathLike[str], *, create: bool = True) -> None:
        self.path = Path(path)
        if self.path.is_dir():
            raise StoreError(f"{self.path}: is a directory; name a results file (.sqlite)")
        if not create and not self.path.is_file():
            raise StoreError(f"{self.path}: no such results file")
        if create and not self.path.parent.is_dir():
            raise StoreError(f"{self.path}: no such directory {str(self.path.parent)!r}")
        if self.path.is_file() and self.path.stat().st_size == 0:
            # tierlab never leaves an empty store (it creates one whole,
            # below): an empty file is a store cut short, or not one.
            raise StoreError(
                f"{self.path}: an empty file, not a tierlab results store (a store that was "
                "cut short?); delete it, or name another file"
            )
        try:
            if create and not self.path.exists():
                _create(self.path)
            self._db = sqlite3.connect(self.path, timeout=30)
            # WAL: a reader (tierlab.load during a sweep) never blocks the
            # writer, and a killed writer leaves every committed row intact.
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._check_or_create(create)
        except sqlite3.DatabaseError as e:
            raise StoreError(f"{self.path}: not a tierlab results store ({e})") from None
        except OSError as e:
            raise StoreError(f"{self.path}: {e.strerror or e}") from None

    def _check_or_create(self, create: bool) -> None:
        tables = {r[0] for r in self._db.execute("SELECT name FROM sqlite_master")}
        if {"meta", "experiments", "runs"} <= tables:
            row = self._db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
            if row is None or int(row[0]) != SCHEMA_VERSION:
                found = "none" if row is None else row[0]
                raise StoreError(
                    f"{self.path}: results schema {found}; this tierlab reads schema "
                    f"{SCHEMA_VERSION}"
                )
            return
        if tables or not create:
            raise StoreError(f"{self.path}: not a tierlab results store")
        with self._db:
            self._db.executescript(_SCHEMA)
            # OR IGNORE: another process that opened the same new file may
            # have written it first.
            self._db.execute(
                "INSERT OR IGNORE INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),)
            )

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writing --------------------------------------------------------

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """A write transaction; a full disk or a read-only store is one
        line naming the store, which keeps every point committed before."""
        try:
            with self._db:
                yield
        except sqlite3.OperationalError as e:
            raise StoreError(
                f"{self.path}: cannot write the results store ({e}); the points recorded "
                "before are kept, and a sweep run again resumes from them"
            ) from None

    def register(self, exp: Experiment) -> None:
        """Records (or updates) the experiment's description and axes. A
        store holding another experiment of the same name (other axes) is
        refused: its rows and these would mix under one name."""
        old = self.experiments().get(exp.name)
        new = exp.meta()
        if old is not None:
            had = [a.get("key") for a in old.get("axes", [])]
            has = [a["key"] for a in new["axes"]]
            if had != has:
                raise StoreError(
                    f"{self.path}: holds another experiment named {exp.name!r}, with axes "
                    f"{_clip(', '.join(map(str, had)) or 'none')}; this one has axes "
                    f"{_clip(', '.join(has) or 'none')}: give this sweep another store "
                    "(--store), or the experiment another name"
                )
        with self._writing():
            self._db.execute(
                "INSERT INTO experiments VALUES (?, ?, ?) ON CONFLICT(name) DO UPDATE "
                "SET spec=excluded.spec, updated_at=excluded.updated_at",
                (exp.name, json.dumps(new), now_iso()),
            )

    def add(self, experiment: str, point: Point, version: str, result: dict[str, Any]) -> None:
        """Records one finished point (replacing an earlier failed attempt)."""
        with self._writing():
            self._db.execute(
                "INSERT OR REPLACE INTO runs VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    experiment,
                    point.hash,
                    point.index,
                    json.dumps(point.labels),
                    point.rep,
                    point.seed,
                    json.dumps(point.config, sort_keys=True),
                    version,
                    result["status"],
                    result.get("error"),
                    json.dumps(result.get("metrics")),
                    None if result.get("timeline") is None else json.dumps(result["timeline"]),
                    result.get("elapsed_s"),
                    now_iso(),
                ),
            )

    def fail(self, experiment: str, hashes: Iterable[str], error: str) -> None:
        """Marks recorded points as failed with ``error`` (they run again
        the next time the experiment is swept)."""
        with self._writing():
            self._db.executemany(
                "UPDATE runs SET status='error', error=? WHERE experiment=? AND hash=?",
                [(error, experiment, h) for h in hashes],
            )

    # -- reading --------------------------------------------------------

    def metric_paths(self, experiment: str) -> set[str]:
        """The metric paths the experiment's successful points hold (a
        point whose summary lacks a named metric holds no entry for it)."""
        out: set[str] = set()
        for r in self.rows(experiment):
            if r["status"] == "ok" and r["metrics"]:
                out.update(json.loads(r["metrics"]) or {})
        return out

    def finished(self, experiment: str, *, failed_too: bool = True) -> set[str]:
        """Hashes of the experiment's recorded points (failed ones included
        unless ``failed_too`` is false)."""
        q = "SELECT hash FROM runs WHERE experiment=?"
        if not failed_too:
            q += " AND status='ok'"
        return {r[0] for r in self._db.execute(q, (experiment,))}

    def experiments(self) -> dict[str, dict[str, Any]]:
        """Every experiment in the store: name -> its description and axes."""
        rows = self._db.execute(
            "SELECT CAST(name AS BLOB), CAST(spec AS BLOB) FROM experiments ORDER BY name"
        )
        out: dict[str, dict[str, Any]] = {}
        for i, (name, spec) in enumerate(rows):
            try:
                n = bytes(name).decode("utf-8")
                out[n] = json.loads(bytes(spec).decode("utf-8"))
            except (UnicodeDecodeError, ValueError) as e:
                raise StoreError(
                    f"{self.path}: experiment row {i} is damaged ({_clip(str(e))}); "
                    "the store cannot be read"
                ) from None
        return out

    def rows(self, experiment: str | None = None) -> Iterator[dict[str, Any]]:
        """The runs' rows, each checked: text columns UTF-8 and JSON
        columns JSON, so that a damaged row is an error naming its point,
        not a traceback where it is read."""
        text: tuple[str, ...] = ("experiment", "hash", "labels", "version", "status", "error")
        text += ("metrics", "timeline", "finished_at", "config")
        cols = [
            "experiment",
            "hash",
            "point",
            "labels",
            "rep",
            "seed",
            "version",
            "status",
            "error",
            "metrics",
            "timeline",
            "elapsed_s",
            "finished_at",
            "config",
        ]
        select = ", ".join(f"CAST({c} AS BLOB)" if c in text else c for c in cols)
        q = f"SELECT {select} FROM runs"
        args: tuple[str, ...] = ()
        if experiment is not None:
            q += " WHERE experiment=?"
            args = (experiment,)
        for raw in self._db.execute(q + " ORDER BY experiment, point", args):
            yield self._checked(dict(zip(cols, raw, strict=True)), text)

    def _checked(self, r: dict[str, Any], text: tuple[str, ...]) -> dict[str, Any]:
        exp = r["experiment"]
        with contextlib.suppress(UnicodeDecodeError):
            exp = bytes(exp).decode("utf-8")
        where = f"point {r['point']} of experiment {_clip(repr(exp))}"
        for c in text:
            v = r[c]
            if isinstance(v, (bytes, memoryview)):
                try:
                    r[c] = bytes(v).decode("utf-8")
                except UnicodeDecodeError as e:
                    raise StoreError(
                        f"{self.path}: {where}: its {c} is not UTF-8 text (byte {e.start}); "
                        "the row is damaged: delete it to run the point again"
                    ) from None
        for c in ("labels", "metrics", "timeline", "config"):
            if r[c]:
                try:
                    json.loads(r[c])
                except ValueError as e:
                    raise StoreError(
                        f"{self.path}: {where}: its {c} is not JSON ({_clip(str(e))}); "
                        "the row is damaged: delete it to run the point again"
                    ) from None
        return r


def _clip(s: str, n: int = 120) -> str:
    return s if len(s) <= n else f"{s[:n]}... ({len(s)} characters)"


def _create(path: Path) -> None:
    """Creates a store whole: the schema is written into a hidden file
    beside ``path``, which is then linked to ``path`` only if no file is
    there yet (two sweeps starting at once on a new store: the second
    opens the first's). A store file is never seen half made."""
    tmp = path.with_name(f".{path.name}.tierlab-{os.getpid()}.new")
    tmp.unlink(missing_ok=True)
    try:
        db = sqlite3.connect(tmp)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            with db:
                db.executescript(_SCHEMA)
                db.execute("INSERT INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
        finally:
            db.close()
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass  # another process made it first: theirs is as good
        except OSError:
            # A file system without hard links: a rename, which may replace
            # a store made in the instant since; rare, and still whole.
            if not path.exists():
                os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
        for side in ("-wal", "-shm"):
            Path(f"{tmp}{side}").unlink(missing_ok=True)


@contextmanager
def _open(path: str | os.PathLike[str]) -> Iterator[Store]:
    s = Store(path, create=False)
    try:
        yield s
    finally:
        s.close()


def _pick(store: Store, experiment: str | None) -> str | None:
    names = store.experiments()
    if experiment is not None and experiment not in names:
        have = ", ".join(names) or "none"
        raise StoreError(f"{store.path}: no experiment {experiment!r} (it holds: {have})")
    return experiment


def _spec_keys(
    store: Store, experiment: str | None, of: Callable[[dict[str, Any]], Iterable[str]]
) -> list[str]:
    """``of(spec)`` over the experiments read (one, or all), in order, each once."""
    keys: list[str] = []
    for name, spec in store.experiments().items():
        if experiment is None or name == experiment:
            keys += [k for k in of(spec) if k not in keys]
    return keys


def _axis_keys(store: Store, experiment: str | None) -> list[str]:
    return _spec_keys(store, experiment, lambda spec: [a["key"] for a in spec.get("axes", [])])


def _named_metrics(store: Store, experiment: str | None) -> list[str]:
    """The metrics the experiments read name, in their order (none for one
    that keeps every figure)."""
    return _spec_keys(store, experiment, lambda spec: spec.get("metrics") or [])


def load(path: str | os.PathLike[str], experiment: str | None = None) -> pd.DataFrame:
    """The results of a store as a DataFrame, one row per point.

    Columns: ``experiment``, ``point`` (its index in the experiment),
    ``hash``, ``status`` (``"ok"`` or ``"error"``), ``error``, ``rep``,
    ``seed``, one column per axis (holding the value, or its label), one
    per kept metric named by its summary path (``miss_ratio``,
    ``tiers.0.hits``), ``elapsed_s``, ``version`` and ``finished_at`` (a
    pandas datetime in UTC; a string before 0.2: CHANGELOG.md).

    Every column is named one way, dotted, an index a part of its own: the
    axis ``tier[0].capacity`` is the column ``tier.0.capacity`` (the value
    as the experiment gives it, ``"10%"`` or ``"4MiB"``), beside the
    metric ``tiers.0.capacity`` (the bytes the run had). A column name is
    also a key path an experiment or an override may use. The old axis
    names (``df["tier[0].capacity"]``) still answer, with a
    DeprecationWarning, until 0.3.

    Parameters
    ----------
    path
        The SQLite file a sweep wrote.
    experiment
        Only this experiment's points (a store can hold several).
    """
    import pandas as pd

    with _open(path) as s:
        exp = _pick(s, experiment)
        keys = _axis_keys(s, exp)
        axes = [column_name(k) for k in keys]
        records: list[dict[str, Any]] = []
        # The experiment's named metrics in their order, so that one the
        # first points lack (a `memorage` object only some points have)
        # keeps its place among the columns; then any other kept ones.
        metric_cols: list[str] = _named_metrics(s, exp)
        for r in s.rows(exp):
            rec: dict[str, Any] = {
                "experiment": r["experiment"],
                "point": r["point"],
                "hash": r["hash"],
                "status": r["status"],
                "error": r["error"],
                "rep": r["rep"],
                "seed": r["seed"],
            }
            rec.update({column_name(k): v for k, v in json.loads(r["labels"]).items()})
            metrics = json.loads(r["metrics"]) if r["metrics"] else {}
            for k in metrics or {}:
                if k not in metric_cols:
                    metric_cols.append(k)
            rec.update(metrics or {})
            rec["elapsed_s"] = r["elapsed_s"]
            rec["version"] = r["version"]
            rec["finished_at"] = r["finished_at"]
            records.append(rec)
    head = ["experiment", "point", "hash", "status", "error", "rep", "seed"]
    tail = ["elapsed_s", "version", "finished_at"]
    seen = {k for rec in records for k in rec}
    metric_cols = [m for m in metric_cols if m in seen]
    cols = head + [a for a in axes] + [m for m in metric_cols if m not in axes] + tail
    df = pd.DataFrame.from_records(records, columns=cols)
    # A time, not text (pandas' convention): sortable, and .dt works.
    df["finished_at"] = pd.to_datetime(df["finished_at"], format="%Y-%m-%dT%H:%M:%S%z", utc=True)
    return renamed(df, dict(zip(keys, axes, strict=True)))


def load_timelines(path: str | os.PathLike[str], experiment: str | None = None) -> pd.DataFrame:
    """The kept timelines (experiments with ``timeline = true``), long form:
    ``experiment``, ``hash``, ``rep``, the axis columns, then the timeline's
    ``requests``, ``lookups``, ``miss_ratio``, ``amat_ns``,
    ``cumulative_miss_ratio``, and ``energy_j`` and ``power_w`` (each
    interval's device energy and mean power, docs/device.md)."""
    import pandas as pd

    frames: list[pd.DataFrame] = []
    with _open(path) as s:
        exp = _pick(s, experiment)
        keys = _axis_keys(s, exp)
        axes = [column_name(k) for k in keys]
        for r in s.rows(exp):
            if not r["timeline"]:
                continue
            t = pd.DataFrame(json.loads(r["timeline"]))
            labels = json.loads(r["labels"])
            front = {"experiment": r["experiment"], "hash": r["hash"], "rep": r["rep"]}
            front.update({a: labels.get(k) for k, a in zip(keys, axes, strict=True)})
            for i, (k, v) in enumerate(front.items()):
                t.insert(i, k, v)
            frames.append(t)
    if not frames:
        df = pd.DataFrame(columns=["experiment", "hash", "rep", *axes, "requests"])
    else:
        df = pd.concat(frames, ignore_index=True)
    return renamed(df, dict(zip(keys, axes, strict=True)))


def load_experiment_meta(
    path: str | os.PathLike[str], experiment: str | None = None
) -> dict[str, Any]:
    """What the store keeps about an experiment: its name, description,
    axes (keys and labels), metrics, repetitions. With several experiments
    in the store, name one."""
    with _open(path) as s:
        names = s.experiments()
        if experiment is None:
            if len(names) != 1:
                have = ", ".join(names) or "none"
                raise StoreError(f"{s.path}: holds experiments {have}; name one")
            return next(iter(names.values()))
        _pick(s, experiment)
        return names[experiment]


def export(
    path: str | os.PathLike[str],
    out: str | os.PathLike[str],
    experiment: str | None = None,
) -> int:
    """Writes ``load(path)`` as CSV or Parquet (by ``out``'s suffix);
    returns the number of rows."""
    suffix = Path(out).suffix.lower()
    if suffix not in (".csv", ".parquet"):
        raise StoreError(f"{out}: the output must end in .csv or .parquet")
    if not Path(out).resolve().parent.is_dir():
        raise StoreError(f"{out}: no such directory {str(Path(out).parent)!r}")
    df = load(path, experiment)
    with atomic_path(out) as tmp:
        if suffix == ".csv":
            df.to_csv(tmp, index=False)
        else:
            df.to_parquet(tmp, index=False)
    return len(df)


def pending(points: Iterable[Point], done: set[str]) -> list[Point]:
    """The points not yet in the store (a hash appears once even if two
    axis combinations give the same config)."""
    seen = set(done)
    out: list[Point] = []
    for p in points:
        if p.hash not in seen:
            seen.add(p.hash)
            out.append(p)
    return out
