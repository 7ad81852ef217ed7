"""Which distribution to install for a module name a project imports.

A "needs package" result tells the user what to `pip install`, and the
import name is often not the distribution's (`import tree` is `dm-tree`,
`import cv2` is `opencv-python`): a wrong hint sends them to an unrelated
package or none. Where the module is installed in the interpreter asking
(the main process may have what the workers lack), its own metadata says;
otherwise a table of the names whose distribution differs, then the import
name with underscores as dashes (the index's usual spelling).

Standard library only: this runs inside verification workers.
"""

from __future__ import annotations

import functools
from importlib import metadata

# Import name (dotted where the top name is shared) -> distribution on the package index.
DISTRIBUTIONS: dict[str, str] = {
    "absl": "absl-py",
    "attr": "attrs",
    "bs4": "beautifulsoup4",
    "Crypto": "pycryptodome",
    "cv2": "opencv-python",
    "dateutil": "python-dateutil",
    "dotenv": "python-dotenv",
    "google.protobuf": "protobuf",
    "gym": "gym",
    "jwt": "PyJWT",
    "magic": "python-magic",
    "official": "tf-models-official",
    "OpenGL": "PyOpenGL",
    "PIL": "pillow",
    "serial": "pyserial",
    "skimage": "scikit-image",
    "sklearn": "scikit-learn",
    "tensorflow_addons": "tensorflow-addons",
    "tensorflow_datasets": "tensorflow-datasets",
    "tensorflow_hub": "tensorflow-hub",
    "tensorflow_io": "tensorflow-io",
    "tensorflow_probability": "tensorflow-probability",
    "tensorflow_text": "tensorflow-text",
    "tf_keras": "tf-keras",
    "tree": "dm-tree",
    "wx": "wxPython",
    "yaml": "pyyaml",
    "zmq": "pyzmq",
}


@functools.lru_cache(maxsize=1)
def _installed() -> dict[str, list[str]]:
    """Top-level module -> distributions providing it, in this interpreter."""
    try:
        return dict(metadata.packages_distributions())
    except Exception:  # broken metadata of one distribution must not hide the message
        return {}


def distribution(module: str) -> str:
    """The distribution that provides `module` (dotted or not)."""
    top = module.split(".")[0]
    installed = _installed().get(top)
    if installed and module.split(".")[0] != "google":  # `google` is a shared namespace
        return installed[0]
    parts = module.split(".")
    for end in range(len(parts), 0, -1):
        found = DISTRIBUTIONS.get(".".join(parts[:end]))
        if found is not None:
            return found
    return top.replace("_", "-")
