"""Code search at a repository's head: symbol definitions, how-questions, commit-message where-tasks."""
