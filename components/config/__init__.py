"""The stack config: the seeds' (Convox racks') keys and value shapes, mapped onto the specs.

``shapes`` (comma lists, ``k=v`` pairs, taints, JSON strings), ``keys`` (one table per spec: which
key sets which field), ``errors`` (a spec's problems named by those keys), ``params``
(``RackParams``: every ``rack:`` key, validated into a ``RackSpec``) and ``stackconfig`` (reading
the current stack's config). The rules themselves are the specs'.
"""
