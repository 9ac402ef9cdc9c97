"""The rack's CrossGuard policy pack. ``rules`` holds the pure rule functions the components share."""
