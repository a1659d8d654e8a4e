"""Half of `import lancedb` is a REST client a local index never uses.

lancedb imports lance_namespace, and that imports the package `lance_namespace_urllib3_client`, whose
`__init__` loads about forty API classes whose methods pydantic wraps in validators at import time: 0.6-0.7
of the 1.3-1.5 CPU-s `import lancedb` costs on a loaded 2-core laptop (`python -X importtime`). Every process
that opens the index pays it: each index run, the warm server's start, a search or failure hook without a
server. `defer()` registers that package before lancedb is imported, with its `__path__` set and its
`__init__` not run, so its submodules (the data models lance_namespace re-exports) import as usual, and the
`__init__` runs the first time anything asks for a name it would have defined (a REST connection). Where the
package is absent or laid out otherwise, nothing is done and lancedb imports as it always did.
"""
from __future__ import annotations

import importlib.util
import sys

PACKAGE = "lance_namespace_urllib3_client"


def defer() -> bool:
    """Register PACKAGE un-initialised (see the module docstring); True when it was registered here."""
    if PACKAGE in sys.modules:
        return False
    try:
        spec = importlib.util.find_spec(PACKAGE)
    except (ImportError, ValueError):
        return False
    if spec is None or spec.loader is None or not spec.submodule_search_locations:
        return False
    module = importlib.util.module_from_spec(spec)
    loader = spec.loader

    def __getattr__(name: str):  # PEP 562: asked only for names the module does not have yet
        if name.startswith("__"):
            raise AttributeError(name)
        module.__dict__.pop("__getattr__", None)
        loader.exec_module(module)  # the package's own __init__, once: every name it defines is set
        return getattr(module, name)

    setattr(module, "__getattr__", __getattr__)  # noqa: B010 - a module-level __getattr__ (PEP 562)
    sys.modules[PACKAGE] = module
    return True
