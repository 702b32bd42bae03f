"""pyarrow, imported at its first use rather than when a module of _arrow is imported.

Strategy: a module that uses pyarrow binds its names (`pa`, `pc`) to a placeholder,
`pa = lazy("pyarrow", globals(), "pa")`, and imports the real ones under `if TYPE_CHECKING:`
for the type checker. The first attribute taken from the placeholder imports the module
(the error says how to install it when it is missing) and puts the module itself in the
placeholder's place in the importing module's globals: from then on the functions there
find pyarrow directly, so a hot path pays nothing after its first call. Importing a module
of _arrow (as `tfrecord_lite.spark` or the CLI do to reach one of its functions) thus never imports
pyarrow; the adapters that need it (tfrecord_lite.arrow) import it themselves. The import
contracts in pyproject.toml hold this: below the adapters, pyarrow, torch and PIL are
imported inside functions only.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

NEEDS_PYARROW = "tfrecord_lite.arrow needs pyarrow: pip install 'tfrlite[arrow]'"


class _Lazy:
    """Stands for module `name` as the global `alias` of `namespace` until first used."""

    __slots__ = ("_alias", "_name", "_namespace")

    def __init__(self, name: str, namespace: dict[str, Any], alias: str) -> None:
        self._name, self._namespace, self._alias = name, namespace, alias

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.load(), attr)

    def load(self) -> ModuleType:
        """The module, imported now; from here on the importing module's global is the module."""
        try:
            module = importlib.import_module(self._name)
        except ImportError as exc:
            raise ImportError(f"{NEEDS_PYARROW} ({exc})") from exc
        if self._namespace.get(self._alias) is self:
            self._namespace[self._alias] = module
        return module

    def __repr__(self) -> str:
        return f"<{self._name}, imported at its first use>"


def lazy(name: str, namespace: dict[str, Any], alias: str) -> Any:
    """A placeholder for module `name` (pyarrow or one of its submodules), bound as `alias` in
    `namespace` (the caller's globals()), that imports it at its first use."""
    return _Lazy(name, namespace, alias)
