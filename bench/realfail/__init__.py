"""bench/realfail: the failure hook measured on real failing runs (fix commits, mutants, environment errors)."""
