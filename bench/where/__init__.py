"""Where would I change X: commit message -> implementation files changed, on real repositories' history."""
