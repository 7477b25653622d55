"""Exit codes of the `pitboss` command, documented in the README."""

OK = 0
FINDINGS_OR_IMBALANCE = 1  # the run finished but counts did not add up
USAGE = 2  # bad arguments, unknown ruleset/table/round
BAD_INPUT = 3  # an input file breaks the contract (named in the message)
