"""`python -m hippo` runs the CLI; `python -m hippo hook <event>` skips click entirely (hook fast path).

hippo's launchers start this in a neutral directory so a cloned repository's `hippo.py` or `json.py`
can never shadow our imports (see hippo.core.runtime.hippo_argv); the directory the command is about
arrives in $HIPPO_LAUNCH_CWD. sys.path was fixed at startup (the neutral dir, or nothing with -P), so
moving back there now cannot put the repository on it.
"""
import os
import sys


def _return_to_launch_dir() -> None:
    where = os.environ.pop("HIPPO_LAUNCH_CWD", "")
    if where:
        try:
            os.chdir(where)
        except OSError:  # gone or unreadable: stay put; commands that need a repo say so themselves
            pass


_return_to_launch_dir()
if "" in sys.path:  # `-c`-style empty entry means "the cwd, whatever it is now": never ours to keep
    sys.path.remove("")

if len(sys.argv) > 1 and sys.argv[1] == "hook":
    from hippo.surfaces.hooks.main import main as hook_main

    hook_main(sys.argv[2:])
else:
    from hippo.surfaces.cli import main

    main()
