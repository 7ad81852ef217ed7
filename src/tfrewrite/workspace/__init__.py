"""The user's files: reading and writing sources and notebooks, discovery, the
cache, positions and diffs.
"""
