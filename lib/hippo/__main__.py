"""`python -m hippo` runs the CLI."""
from hippo.cli import main

main()
