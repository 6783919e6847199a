"""The scheduling core of cronctl: pure functions over plain data.

Nothing in this package does I/O or reads the wall clock; every time is an
argument, counted in whole minutes since 1970-01-01T00:00 UTC. The operator,
the single-node runner and the offline harness all drive these modules and
hold no scheduling logic of their own.
"""
