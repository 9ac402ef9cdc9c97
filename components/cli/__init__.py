"""The ``mixed-os-racks`` command (also ``python -m mixed_os_racks`` and ``python -m mixed_os_racks.offline``), a
module a command: ``preview``, the rack's preview on a machine with no cloud (with ``--state``, the plan against
the stack's exported state; with ``--soaked-in``, the soak gate against the environment before's); ``analyze``,
the packs over a stack's state; ``guard``, the same change-safety verdicts over ``pulumi preview --json`` output;
``pack init DIR``, a policy pack folder for another repository; ``schema``, the component package's schema (what
the component provider in ``provider/`` serves to ``pulumi package add``); ``soak`` and ``promote``, a new AMI's
way from one environment to the next; and ``fleet``, every stack of the project in one matrix.

It puts the pieces together: the stack file (read as the Pulumi CLI reads it, with the rack's
config model saying which keys hold text), the offline engine (``offline/``), and the policy packs.
What a command shares sits below the commands: ``common`` (exit codes, ``UsageError``, arguments, printing),
``packs`` (which packs run), ``stackrun`` (one stack's offline preview), ``evidence`` (what the soak gate
reads); ``commands`` assembles the parser and runs ``main()``. Nothing outside ``cli/`` imports it, but the
process's entry (``mixed_os_racks.__main__``): the domain it runs (``promote.py``, ``fleet.py``, ``offline/``,
``pack/``) knows nothing of a command line.

Exit codes: ``0`` fine (advisories allowed), ``1`` a mandatory policy is violated (``lane-removal``
among them), ``2`` an error (one
``error:`` line per problem, naming the file, key or argument; never a traceback), ``130``
interrupted (Ctrl-C; every policy pack process is killed first).
"""

from .commands import entry, main

__all__ = ["entry", "main"]
