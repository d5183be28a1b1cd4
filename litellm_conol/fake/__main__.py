"""``python -m litellm_conol.fake --port N``: run the fake conol server."""

from __future__ import annotations

import sys

from ._cli import main

if __name__ == "__main__":
    sys.exit(main())
