"""Blackjack of document 004: rules as data, hand totals, the dealer's H17 draws, settlement, pair RTP.

Pure engine, no I/O beyond reading the bundled ruleset file. Not yet wired into the pipeline,
recorder, warehouse or replay (issue 29 remains open for those).
"""
