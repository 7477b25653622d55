"""`make bench` / `python -m bench`: how fast and how lean the audit is, side by side with baselines.

See bench/README.md. Modules: datasets (generate and cache the recorded datasets), measure (one
measurement in a fresh process), runner (the orchestration: subprocesses, peak memory, medians),
report (results.md, results.json, throughput.png).
"""
