"""Surveillance: is the game being beaten or bent? Detectors over the data the audit already holds
(every card of every shoe in order, every outcome, every bet), each returning `SurveillanceTest` rows
with a statistic, a p-value and its sample, false discoveries controlled across a run
(docs/surveillance.md). Pure: no I/O, no Beam, no DuckDB.
"""
