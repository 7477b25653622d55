"""Surveillance: is the game being beaten or bent? Detectors over the data the audit already holds
(every card of every shoe in order, every outcome, every bet), each returning `SurveillanceTest` rows
with a statistic, a p-value and its sample, false discoveries controlled across a run
(docs/surveillance.md). Pure: no I/O, no Beam, no DuckDB.
"""

# setting `history_days`: the window reaches this many days back from the test's last night (equipment.py
# § history). Here, beside no detector, so that the command line's option default does not import them: the
# detectors import scipy.stats (~1 s of CPU), which every `pitboss` command, the audit included, then paid.
HISTORY_DAYS = 30
