"""``python -m mixed_os_racks`` (and ``python -m mixed_os_racks.offline``) and the ``mixed-os-racks``
script: the ``mixed-os-racks`` command."""

import gc

RUN_GC_THRESHOLDS = (10_000_000, 100, 100)
"""The cycle collector's thresholds for one command (a short-lived process), set before its imports.
The imports build about a million objects that live as long as the process: with CPython's
defaults (700, 10, 10) they cost 128 collections, about 45 ms of the prod preview. Then a run's
registrations leave cycles of futures behind, and each collection of a large young generation walked
them again: 1,000 generated pools took 7.1 s of CPU for the program with the pack's thresholds
(50,000, 20, 20), 4.7 s with none at all, for 360 MB at most instead of 310. A collection walks every
young object once (about a microsecond each), so what it costs is the objects it walks, however often it
runs: a threshold of 2 million was crossed once by 1,000 pools with the pack, and that one collection took
2 s. So a collection runs only every 10 million allocations, which no rack of a few thousand lanes reaches;
a program past that is still collected."""


def entry() -> None:
    gc.set_threshold(*RUN_GC_THRESHOLDS)
    from .cli import entry as run  # imports on any SDK the components take: only `preview` checks the engine's

    gc.freeze()  # what the imports built is never scanned again
    run()


if __name__ == "__main__":
    entry()
