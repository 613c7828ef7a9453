"""The exit statuses every ``vspec`` command ends with, as the spec contract sets them:
0 when every spec passed (skips and xfails included), 1 when any failed, 2 for bad input
(an invalid spec, a path that does not exist, a bad command line), 130 when interrupted.
Imports nothing.
"""

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
