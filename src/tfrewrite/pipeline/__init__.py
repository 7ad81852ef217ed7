"""The pipeline: discover, index (pass 1), rule pass (pass 2), fix rounds, and
the gate on decorating fixes.
"""
