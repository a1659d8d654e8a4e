"""End-to-end tests that drive the real Claude Code client (issue 6)."""
