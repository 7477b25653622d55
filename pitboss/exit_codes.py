"""Exit codes of the `pitboss` command, documented in the README."""

OK = 0
CHECK_FAILED = 1  # the command ran and says no: counts do not add up, files changed since the run, ...
USAGE = 2  # bad arguments, unknown ruleset/table/round
BAD_INPUT = 3  # an input file breaks the contract (named in the message)
INTERNAL = 4  # an unexpected error: one line on stderr, the traceback in pitboss-error.log
