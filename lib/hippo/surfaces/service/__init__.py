"""The warm per-repo service: one server process per index holds LanceDB, the model and an open Searcher;
one stdlib-only client asks it and falls back to answering in-process (docs/ARCHITECTURE.md)."""
