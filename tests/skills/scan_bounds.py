"""The one time bound the scanner's hostile-input tests hold: :data:`HOSTILE_SECONDS`.

It guards against runaway work (a super-linear pass over a megabyte of attacker input takes
minutes, not seconds), not against slowness: scan times are measured by
``bench/scan_bench.py`` and recorded in docs/BENCHMARKS.md. It is generous because the suite
runs on shared, loaded machines, where a linear scan of a hostile megabyte has taken 11 s.
"""

from __future__ import annotations

from typing import Final

HOSTILE_SECONDS: Final = 60.0
