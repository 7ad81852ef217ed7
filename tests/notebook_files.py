"""Notebooks for tests, written the way Jupyter writes them."""

from __future__ import annotations

import json


def make_notebook(cells: list[tuple[str, str]], indent: int = 1, as_list: bool = True) -> str:
    """A notebook written the way Jupyter writes one (sorted keys, `indent`
    spaces, a trailing newline), with an image output on every code cell."""
    out = []
    for n, (kind, text) in enumerate(cells):
        source = text.splitlines(keepends=True) if as_list else text
        cell = {"cell_type": kind, "metadata": {"tags": [f"t{n}"]}, "source": source}
        if kind == "code":
            cell["execution_count"] = n + 1
            cell["outputs"] = [
                {
                    "data": {"image/png": "iVBORw0KGgo=\n", "text/plain": ["<Figure>"]},
                    "metadata": {},
                    "output_type": "display_data",
                }
            ]
        cell["id"] = f"cell-{n}"
        out.append(cell)
    document = {
        "cells": out,
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return json.dumps(document, indent=indent, sort_keys=True, ensure_ascii=False) + "\n"
