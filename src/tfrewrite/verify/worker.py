"""A verification worker: `python -m tfrewrite.verify.worker`.

It imports TensorFlow once, then answers requests, one JSON object per line on
standard input, with one JSON object per line on its original standard output:

    -> {"ready": true, "tensorflow": "2.21.0", "python": "3.12.3"}
    <- {"id": 1, "request": {"qualname": ..., "original_source": ..., ...}}
    -> {"id": 1, "result": {"function": ..., "verdict": ..., ...}}

User code prints, and `tf.print` writes straight to file descriptors, so the
protocol keeps a private duplicate of descriptor 1 and points descriptor 1 at
standard error before any user code runs. Only the standard library and
TensorFlow are needed, so the worker can run under another interpreter with
`tfrewrite` on its `PYTHONPATH`.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from typing import IO, Any

from tfrewrite.verify import legacy_keras

INSTALL_HINT = "pip install 'tfrewrite[verify]'"
# Seconds between two looks at whether the parent process is still there.
PARENT_POLL_SECONDS = 1.0


def _send(stream: IO[str], data: dict[str, Any]) -> None:
    stream.write(json.dumps(data) + "\n")
    stream.flush()


def _handle(message: dict[str, Any]) -> dict[str, Any]:
    from tfrewrite.verify import project_imports, sandbox

    data = message["request"]
    project_imports.enter_project(data.get("sys_path", []))
    path = data.get("path", "<source>")
    folder = ""
    if not path.startswith("<"):
        # Paths are relative to where verify was started, not to the sandbox.
        data["path"] = path = os.path.abspath(path)
        folder = os.path.dirname(path)
    caller = data.get("caller")
    if caller and caller.get("path"):
        caller["path"] = os.path.abspath(caller["path"])
    # The user's code runs in a temporary mirror of the script's folder:
    # relative reads see the project, relative writes never land in it; the
    # writes into the project it tried are reported with the result.
    with sandbox.isolated(folder, data.get("sys_path", [])):
        result = _verify(data)
        refused = sandbox.refused_writes()
    if refused:
        result["warnings"] = [*(result.get("warnings") or []), *sandbox.refusal_warnings(refused)]
    return result


def _verify(data: dict[str, Any]) -> dict[str, Any]:
    from tfrewrite.verify.checks import Options, Request, verify

    request = Request(
        qualname=data["qualname"],
        original_source=data["original_source"],
        rewrite_source=data.get("rewrite_source"),
        path=data.get("path", "<source>"),
        package=data.get("package"),
        specs=data.get("specs", {}),
        config_key=data.get("config_key"),
        harness=data.get("harness"),
        options=Options.from_json(data.get("options", {})),
        loop=data.get("loop"),
        factory=data.get("factory"),
        caller=data.get("caller"),
        needs_autograph=data.get("needs_autograph"),
        fixes=tuple(data.get("fixes", ())),
        stand_in_hint=data.get("stand_in_hint"),
    )
    return verify(request)


def _exit_with_parent() -> None:
    """Exit as soon as the process that started this worker is gone (killed,
    so unable to stop it): the user's code must not go on running, possibly
    for minutes, in an orphan. A daemon thread polls: standard library only."""
    import threading
    import time

    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_POLL_SECONDS)
        os._exit(1)

    threading.Thread(target=watch, name="tfrewrite-parent-watch", daemon=True).start()


def prepare() -> dict[str, Any]:
    """Import TensorFlow once and tune it for verification: the ready message
    (`{"ready": true, ...}`), or `{"ready": false, "error": ...}` naming the
    install command. Shared by the worker processes and the Ray actors."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    try:
        import tensorflow as tf
    except Exception as err:  # ImportError, or a broken installation
        return {
            "ready": False,
            "error": f"cannot import TensorFlow ({err}); install it with {INSTALL_HINT}",
        }
    # TensorFlow's own warnings (retracing, ...) would land in the captured
    # output that prints are compared against.
    tf.get_logger().setLevel("ERROR")
    # Verification tensors are tiny, and several workers share the cores:
    # one thread per op beats oversubscribing the machine.
    threads = int(os.environ.get("TFREWRITE_VERIFY_THREADS", "1"))
    tf.config.threading.set_intra_op_parallelism_threads(threads)
    tf.config.threading.set_inter_op_parallelism_threads(threads)
    # Keras 2 code runs in workers started with TF_USE_LEGACY_KERAS=1, where
    # its `import keras` means tf_keras too (`legacy_keras`).
    legacy_keras.install_alias()
    return {
        "ready": True,
        "tensorflow": tf.__version__,
        "python": sys.version.split()[0],
        **legacy_keras.ready_info(tf.__version__),
    }


def answer(request: dict[str, Any]) -> dict[str, Any]:
    """The result for one request; a failure of verify itself is an `error`
    result with its traceback, never an exception (the worker goes on)."""
    try:
        return _handle({"request": request})
    except Exception:
        return {
            "function": request.get("qualname", "?"),
            "verdict": "error",
            "error": traceback.format_exc(limit=6),
        }


def main() -> int:
    _exit_with_parent()
    protocol = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    sys.dont_write_bytecode = True  # importing the project must not add __pycache__ to it
    os.dup2(2, 1)
    ready = prepare()
    _send(protocol, ready)
    if not ready["ready"]:
        return 2
    for line in sys.stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        result = answer(message.get("request", {}))
        _send(protocol, {"id": message.get("id"), "result": result})
    return 0


if __name__ == "__main__":
    sys.exit(main())
