"""Games other than baccarat, one package each (issue 29: the seam every game will share).

Baccarat still lives in engine/ itself; moving it under engine/games/baccarat/ behind a common
interface is the open first half of issue 29.
"""
