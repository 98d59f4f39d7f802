"""The reproductions of the source papers, one module each; each module's
``SYSTEM`` is registered in :data:`tierlab.reproduce.SYSTEMS` by its name here.

This package's own import stays light (the CLI's parser reads :data:`NAMES`)."""

#: The reproductions, by module name; ``tierlab reproduce NAME``.
NAMES: tuple[str, ...] = ("s1", "s2", "s3", "s4", "s5")
