"""Rewrite code shared by more than one hazard family: fixes as LibCST edits,
traced calls, value uses, dtypes.
"""
