"""Domain facts: what AWS, EKS, Karpenter, pulumi-eks and the charts do, read from upstream and dated.

Standard library only (and the package's ``clock``): the specs, the syntax, the components, the offline
preview and the policy pack all read them, and nothing here imports any of those. ``upstream`` (EKS,
Karpenter, pulumi-eks and chart facts, with Karpenter's compatibility matrices), ``instances`` (instance
families and sizes, GPU drivers), ``osfamily`` (one record per OS family: alias, devices, EKS AMI types, what lanes
it may run), ``wellknown`` (a NodePool's requirements against the instance table),
``amifacts`` (an AMI's facts), ``prices`` and ``pricelist`` (the on-demand price table), ``tables`` (every
upstream table, its source, commit and date); ``pricegen``, ``sizegen`` and ``matrixgen`` regenerate the
generated tables from a karpenter-provider-aws checkout (``make tables``).
"""
