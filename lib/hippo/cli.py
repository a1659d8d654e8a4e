"""The `hippo` command line. Thin: validates flags, calls the library, maps errors to exit codes.

Heavy imports (lancedb, fastembed, numpy) happen inside command bodies only.
"""
from __future__ import annotations

import sys
from pathlib import Path

import click

from hippo import __version__
from hippo.errors import BadQueryError, HippoError


def _root(path: str | None) -> Path:
    from hippo.gitutil import find_root

    return find_root(Path(path or ".").resolve())


class _Group(click.Group):
    """Turns HippoError into a one-line message instead of a traceback."""

    def invoke(self, ctx: click.Context):  # type: ignore[override]
        try:
            return super().invoke(ctx)
        except BadQueryError as exc:
            raise click.UsageError(str(exc)) from None
        except HippoError as exc:
            raise click.ClickException(str(exc)) from None


@click.group(cls=_Group)
@click.version_option(__version__, prog_name="hippo")
def cli() -> None:
    """hippo: a local, always-fresh memory of this repository for Claude Code."""


def main() -> None:
    cli(prog_name="hippo")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
