"""The rack's CrossGuard policy pack (``python policies`` serves it; see ``__main__``).

``rules`` holds the pure rule functions the components share; ``facts`` reads resources (with
``wellknown`` for a NodePool's requirements), ``checks`` is the policies themselves, ``lookup`` the
optional EC2 and SSM look-up, ``scope`` what one request's policies share.
"""
