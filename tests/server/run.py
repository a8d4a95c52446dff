"""CTest entry of the llm-server suite: runs pytest on this folder, or exits
77 (skipped) with a message when pytest or the openai client is missing
(CI installs both: .ci/run)."""
import importlib.util
import os
import sys

missing = [m for m in ("pytest", "openai") if importlib.util.find_spec(m) is None]
if missing:
    print("SKIP: python packages missing: " + ", ".join(missing) + " (python3 -m pip install openai pytest)")
    sys.exit(77)
import pytest  # noqa: E402

here = os.path.dirname(os.path.abspath(__file__))
sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", here] + sys.argv[1:]))
