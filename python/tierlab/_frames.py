"""DataFrames whose renamed columns still answer to their old names.

0.2 names every column of :func:`tierlab.load` one way, dotted
(``tier.0.capacity`` beside the metric ``tiers.0.capacity``); the axis
columns' old names (``tier[0].capacity``, the key path as the experiment
wrote it) still work until 0.3 in ``df[old]``, ``df[[..., old]]``,
``groupby``, ``pivot``, ``pivot_table``, ``sort_values``, ``set_index`` and
``drop_duplicates``, each with a DeprecationWarning naming the new one.
Frames made from such a frame (a filter, a copy) keep the old names.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

#: The attribute holding {old name: new name}.
RENAMED = "renamed_columns"


def renamed(df: pd.DataFrame, old_to_new: dict[str, str]) -> pd.DataFrame:
    """``df`` as a frame whose old column names answer with a warning."""
    global _CLASS
    if _CLASS is None:
        _CLASS = _frame_class()
    out: pd.DataFrame = _CLASS(df)
    out.attrs[RENAMED] = {o: n for o, n in old_to_new.items() if o != n}
    return out


def _frame_class() -> type:
    import pandas as pd

    class Results(pd.DataFrame):  # type: ignore[misc]
        """tierlab.load()'s frame: see the module's docstring."""

        @property
        def _constructor(self) -> type:
            return Results

        def _new_name(self, key: Any) -> Any:
            if isinstance(key, list):
                return [self._new_name(k) for k in key]
            if not isinstance(key, str) or key in self.columns:
                return key
            new = self.attrs.get(RENAMED, {}).get(key)
            if new is None or new not in self.columns:
                return key
            warnings.warn(
                f"column {key!r} is named {new!r} since 0.2 (one naming for every "
                "column: dotted, an index a part of its own); the old name goes in 0.3",
                DeprecationWarning,
                stacklevel=3,
            )
            return new

        def __getitem__(self, key: Any) -> Any:
            return super().__getitem__(self._new_name(key))

    # The methods that take column names (first argument, or these
    # keywords) answer to the old names too.
    def named(method: str) -> Any:
        base = getattr(pd.DataFrame, method)

        def call(self: Any, *args: Any, **kwargs: Any) -> Any:
            if args:
                args = (self._new_name(args[0]), *args[1:])
            for k in _COLUMN_ARGS:
                if k in kwargs:
                    kwargs[k] = self._new_name(kwargs[k])
            return base(self, *args, **kwargs)

        call.__name__ = method
        # Not pandas' docstring: its examples would run as this module's
        # doctests (tests/test_api.py) once the class exists.
        call.__doc__ = f"`pandas.DataFrame.{method}`, the old column names answering too."
        return call

    for m in _METHODS:
        setattr(Results, m, named(m))
    return Results


_METHODS = ("groupby", "pivot", "pivot_table", "sort_values", "set_index", "drop_duplicates")
_COLUMN_ARGS = ("by", "index", "columns", "values", "keys", "subset")


_CLASS: type | None = None
