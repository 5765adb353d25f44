"""Helpers every layer may use: progress bars, atomic file writes, the machine's description."""
