"""What exists at start is kept off the cyclic collector; what comes later is not."""

import subprocess
import sys
import textwrap


def test_start_up_objects_are_exempt_and_later_cycles_still_collected() -> None:
    # In a process of its own: freezing is for the whole interpreter.
    program = textwrap.dedent(
        """
        import gc, weakref
        from mux.system.memory import exempt_from_collection

        class Node:
            pass

        exempt_from_collection()
        assert gc.get_freeze_count() > 1000, gc.get_freeze_count()
        later = Node()
        later.me = later  # a cycle made after the start: a pane's objects are like this
        gone = weakref.ref(later)
        del later
        gc.collect()
        assert gone() is None, "a cycle made after the freeze was not collected"
        print("ok")
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr
