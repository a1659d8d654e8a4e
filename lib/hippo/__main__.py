"""`python -m hippo` runs the CLI; `python -m hippo hook <event>` skips click entirely (hook fast path)."""
import sys

if len(sys.argv) > 1 and sys.argv[1] == "hook":
    from hippo.hooks.main import main as hook_main

    hook_main(sys.argv[2:])
else:
    from hippo.cli import main

    main()
