"""The fact model: what tfrewrite knows of a file and a project, defined once
and asked by every rule, pass 1 and verify.
"""
