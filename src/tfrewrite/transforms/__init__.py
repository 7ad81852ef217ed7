"""Rewrite machinery shared by several rules."""
