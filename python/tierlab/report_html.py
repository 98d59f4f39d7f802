"""A report as one self-contained HTML file: the sections of
:mod:`tierlab.report` (figures inlined as PNG, also written as PNG and SVG
files), their tables in one number format per column, and the table of
all results. Wide tables scroll inside the page, which never overflows
the window sideways (tests/test_report_browser.py checks it in Chromium).
"""

from __future__ import annotations

import base64
import html
import io
import math
import numbers
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tierlab._atomic import atomic_path, atomic_write
from tierlab.errors import StoreError
from tierlab.plotting import counted
from tierlab.report import Report, Section, build_sections

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

#: Results tables longer than this are cut in the HTML (the store has them all).
MAX_TABLE_ROWS = 500


def _png_b64(fig: Figure) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _table_html(df: pd.DataFrame) -> str:
    shown = formatted(df.head(MAX_TABLE_ROWS))
    # In a box of its own that scrolls sideways: the table of all results
    # has a column per metric (60 and more) and overflowed the page.
    out: str = "<div class='wide'>" + shown.to_html(index=False, border=0, classes="results")
    out += "</div>"
    if len(df) > MAX_TABLE_ROWS:
        out += f"<p>(first {MAX_TABLE_ROWS} of {len(df):,} rows)</p>"
    return out


def formatted(df: pd.DataFrame, na: str = "") -> pd.DataFrame:
    """The table as text, one number format per column: a missing value is
    ``na`` (never "None" or "nan"), whole numbers get thousands separators,
    and the other numbers of a column get the same decimals (four
    significant digits at the column's largest value, fewer when the
    values need fewer)."""
    return df.apply(lambda col: col.map(column_format(list(col), na)))


def _is_number(v: Any) -> bool:
    # numbers.Real covers numpy's scalars too (numpy's bool is not one); a
    # bool is a word, not a number.
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


def column_format(values: Sequence[Any], na: str = "") -> Any:
    """The one formatter of a column of values.

    >>> f = column_format([0.5, 0.123456, None])
    >>> f(0.5), f(0.123456), f(None)
    ('0.5000', '0.1235', '')
    >>> f = column_format([286088.1, 30503.25])
    >>> f(286088.1), f(30503.25)
    ('286,088', '30,503')
    >>> f = column_format([1, 2.0, "n/a"])
    >>> f(1), f(2.0), f("n/a")
    ('1', '2', 'n/a')
    >>> f = column_format([0.6, 1.0])
    >>> f(0.6), f(1.0)
    ('0.6', '1.0')
    """
    nums = [float(v) for v in values if _is_number(v) and math.isfinite(v)]
    decimals = 0
    if nums:
        top = max(abs(x) for x in nums)
        digits = math.floor(math.log10(top)) + 1 if top > 0 else 1
        most = min(8, max(0, 4 - digits))
        # No more decimals than the column's values need: 0.6 and 1.0 as given
        # (0.6, 1.0), not 0.6000 and 1.0000.
        decimals = next(
            (
                k
                for k in range(most + 1)
                if all(abs(round(x, k) - x) <= 1e-9 * max(1, abs(x)) for x in nums)
            ),
            most,
        )

    def fmt(v: Any) -> str:
        if v is None or (isinstance(v, float) and math.isnan(v)):
            return na
        if not _is_number(v):
            return str(v)
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return f"{v:,.{decimals}f}"

    return fmt


_CSS = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; } h3 { font-size: 1em; }
table.results { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0 1.5em; }
table.results th, table.results td { padding: 2px 8px; border-bottom: 1px solid #ddd;
  text-align: right; }
table.results th { background: #f4f4f4; white-space: nowrap; }
.wide { overflow-x: auto; max-width: 100%; }
img { max-width: 100%; } .meta { color: #555; font-size: 0.9em; }
figcaption { font-size: 0.9em; color: #333; } figcaption .file { color: #777; }
"""


def make_folder(out: Path) -> None:
    """Creates the folder a command writes into (and its parents); a file
    in the way is named as such, not as mkdir's "File exists"."""
    for p in (out, *out.parents):
        if p.exists() and not p.is_dir():
            raise StoreError(f"{p}: is a file; the output is a folder (-o DIR)")
    out.mkdir(parents=True, exist_ok=True)


def _not_the_store(p: Path, store: str | os.PathLike[str]) -> None:
    """A report's file may not replace the store it reports on (a store
    named like the report's page, in the report's folder)."""
    try:
        same = os.path.samefile(p, store)
    except OSError:
        return  # p does not exist yet
    if same:
        raise StoreError(
            f"{p}: is the results store the report reads; write the report to another "
            "folder (-o DIR)"
        )


def write_report(
    store: str | os.PathLike[str],
    out_dir: str | os.PathLike[str] | None = None,
    *,
    experiment: str | None = None,
    extra: Sequence[Section] = (),
) -> Report:
    """Writes the plots (PNG and SVG) and one self-contained HTML file of an
    experiment's results.

    Parameters
    ----------
    store
        A results store (``tierlab sweep``).
    out_dir
        Where to write (created if absent); default ``<experiment>-report``
        beside the store.
    experiment
        Which experiment, when the store holds several.
    extra
        Sections put first (``tierlab reproduce``'s comparison with the paper).

    Returns
    -------
    Report
        The HTML file and the plot files.
    """
    from tierlab import __version__
    from tierlab.store import Store

    with Store(store, create=False):
        pass  # a missing file or another kind of file fails here, with StoreError
    meta, df, sections = build_sections(store, experiment)
    name = meta["name"]
    out = Path(out_dir) if out_dir is not None else Path(store).parent / f"{name}-report"
    make_folder(out)
    sections = [*extra, *sections]
    plots: list[Path] = []
    body: list[str] = []
    ok = int((df["status"] == "ok").sum()) if not df.empty else 0
    failed = int((df["status"] == "error").sum()) if not df.empty else 0
    axes = [a["key"] for a in meta.get("axes", [])]
    body.append(f"<h1>{html.escape(name)}</h1>")
    if meta.get("description"):
        body.append(f"<p>{html.escape(meta['description'])}</p>")
    body.append(
        f"<p class='meta'>{counted(ok, 'point')} ok, {failed:,} failed; axes: "
        f"{html.escape(', '.join(axes) or 'none')}; repetitions: "
        f"{meta.get('repetitions', 1)}; store: {html.escape(str(store))}; "
        f"report by tierlab {html.escape(__version__)}.</p>"
    )
    used: set[str] = set()
    for sec in sections:
        body.append(f"<h2>{html.escape(sec.title)}</h2>")
        if sec.text:
            body.append(f"<p>{html.escape(sec.text)}</p>")
        for plot in sec.figures:
            fig = plot.figure
            # Named after the experiment once: a reproduction's plot named
            # "s1-bonnie-throughput" in experiment "s1" was s1-s1-bonnie-...
            stem = plot.name if plot.name.startswith(f"{name}-") else f"{name}-{plot.name}"
            while stem in used:
                stem += "-2"
            used.add(stem)
            for ext in ("png", "svg"):
                p = out / f"{stem}.{ext}"
                _not_the_store(p, store)
                with atomic_path(p) as tmp:
                    fig.savefig(tmp, format=ext)
                plots.append(p)
            body.append(
                f"<figure><img alt='{html.escape(plot.caption)}' "
                f"src='data:image/png;base64,{_png_b64(fig)}'/>"
                f"<figcaption>{html.escape(plot.caption)} "
                f"<span class='file'>({html.escape(stem)}.svg)</span></figcaption></figure>"
            )
        for title, table in sec.tables:
            body.append(f"<h3>{html.escape(title)}</h3>")
            body.append(_table_html(table))
    body.append("<h2>All results</h2>")
    cols = [c for c in df.columns if c not in ("hash", "version", "finished_at", "experiment")]
    body.append(_table_html(df[cols]))
    if failed:
        errs = df[df["status"] == "error"][[*axes, "rep", "error"]]
        body.append("<h3>Failed points</h3>")
        body.append(_table_html(errs))
    page = (
        "<!DOCTYPE html>\n<html><head><meta charset='utf-8'>"
        f"<title>tierlab: {html.escape(name)}</title><style>{_CSS}</style></head>"
        f"<body>{''.join(body)}</body></html>\n"
    )
    path = out / f"{name}.html"
    _not_the_store(path, store)
    with atomic_write(path) as f:
        f.write(page)
    return Report(name, path, plots, sections)
