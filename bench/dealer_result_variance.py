"""dealer_result on clean simulated floors (docs/surveillance.md § Minimum samples): the false-positive
rate at p <= 0.01 and 0.0005 of the house-result z under three variances. Usage:
`python -m bench.dealer_result_variance blackjack,roulette,sicbo,baccarat,design 300 5000 4` (floors, rounds, dealers
a chunk, chunks). Null simulation of dealer_result's z under three variances: per-bet theoretical (independent
bets), round-cluster sum_r (h_r - e_r)^2, and their max. Rounds share an outcome
bets on one round correlated."""
import sys

import numpy as np
from scipy.special import erfc

LEVELS = np.array([500, 1000, 2000, 2500, 5000, 10000, 20000, 25000, 50000], float)
LP = np.array([.2, .2, .15, .15, .12, .08, .05, .03, .02])

def stakes(rng, k):
    return rng.choice(LEVELS, k, p=LP)

def scenario(rng, name, dealers, rounds):
    """returns arrays per dealer: D = sum(h-e), Vth, Vcl, stake"""
    R = dealers * rounds
    if name == "design":  # one even-money bet a spin, 5/10/25.00
        s = rng.choice(np.array([500., 1000., 2500.]), R)
        rtp, var = 36/37, 4*18/37 - (36/37)**2
        win = rng.random(R) < 18/37
        d = s * (rtp - np.where(win, 2, 0))  # h - e = s(1-c) - s(1-rtp)
        vth = s**2 * var
    elif name == "blackjack":  # 3 boxes a round (dealer bust shared), a main bet + Poisson(12) bets behind each box
        bust = rng.random(R) < 0.28
        d = np.zeros(R)
        vth = np.zeros(R)
        # box credit per unit: bust -> win 2 w.p. .8 else 0 (player bust); else win .30 push .12 lose; BJ 4.5% any
        for _box in range(3):
            u = rng.random(R)
            bj = rng.random(R) < 0.045
            c = np.where(bust, np.where(u < 0.8, 2.0, 0.0), np.where(u < 0.30, 2.0, np.where(u < 0.42, 1.0, 0.0)))
            c = np.where(bj, 2.5, c)
            # marginal distribution for rtp/variance
            p2 = 0.955*(0.28*0.8 + 0.72*0.30)
            p1 = 0.955*0.72*0.12
            p25 = 0.045
            rtp = 2*p2 + p1 + 2.5*p25
            var = 4*p2 + p1 + 6.25*p25 - rtp**2
            k = 1 + rng.poisson(12, R)
            idx = np.repeat(np.arange(R), k)
            s = stakes(rng, idx.size)
            S = np.bincount(idx, s, R)
            Q = np.bincount(idx, s*s, R)
            d += S * (rtp - c)
            vth += Q * var
    elif name == "roulette":  # Poisson(25) bets on one spin: red/black, dozens, straight ups
        pocket = rng.integers(0, 37, R)
        k = rng.poisson(25, R)
        idx = np.repeat(np.arange(R), k)
        n = idx.size
        s = stakes(rng, n)
        typ = rng.choice(3, n, p=[.5, .3, .2])
        sel = rng.integers(0, 37, n)
        p = pocket[idx]
        red = np.isin(p, [1,3,5,7,9,12,14,16,18,19,21,23,25,27,30,32,34,36])
        want_red = sel % 2 == 0
        c = np.where(typ == 0, np.where((p > 0) & (red == want_red), 2.0, 0.0),
            np.where(typ == 1, np.where((p > 0) & ((p - 1) // 12 == sel % 3), 3.0, 0.0),
                     np.where(p == sel, 36.0, 0.0)))
        rtp = 36/37
        var = np.where(typ == 0, 4*18/37, np.where(typ == 1, 9*12/37, 36**2/37)) - rtp**2
        d = np.bincount(idx, s * (rtp - c), R)
        vth = np.bincount(idx, s*s*var, R)
    elif name == "sicbo":  # ~20 bets a roll: small/big (lose on triples), a triple at 180:1, any triple 30:1
        dice = rng.integers(1, 7, (R, 3))
        tot = dice.sum(1)
        triple = (dice[:, 0] == dice[:, 1]) & (dice[:, 1] == dice[:, 2])
        k = rng.poisson(20, R)
        idx = np.repeat(np.arange(R), k)
        n = idx.size
        s = stakes(rng, n)
        typ = rng.choice(3, n, p=[.7, .15, .15])
        face = rng.integers(1, 7, n)
        t, tr, f0 = tot[idx], triple[idx], dice[idx, 0]
        big = rng.random(n) < .5
        c = np.where(typ == 0, np.where(~tr & np.where(big, t >= 11, t <= 10), 2.0, 0.0),
            np.where(typ == 1, np.where(tr & (f0 == face), 181.0, 0.0), np.where(tr, 31.0, 0.0)))
        p0 = (108 - 3) / 216  # big: totals 11-17 less the 3 triples
        r0, r1, r2 = 2*p0, 181/216, 31*6/216
        v0, v1, v2 = 4*p0 - r0**2, 181**2/216 - r1**2, 31**2*6/216 - r2**2
        rtp = np.choose(typ, [r0, r1, r2])
        var = np.choose(typ, [v0, v1, v2])
        d = np.bincount(idx, s*(rtp - c), R)
        vth = np.bincount(idx, s*s*var, R)
    elif name == "baccarat":  # Poisson(20) bets on one coup: banker .95, player 1, tie 8:1 (push on tie for B/P)
        u = rng.random(R)
        out = np.where(u < .4586, 0, np.where(u < .4586 + .4462, 1, 2))  # banker, player, tie
        k = rng.poisson(20, R)
        idx = np.repeat(np.arange(R), k)
        n = idx.size
        s = stakes(rng, n)
        typ = rng.choice(3, n, p=[.48, .44, .08])
        o = out[idx]
        pb, pp, pt = .4586, .4462, .0952
        c = np.where(typ == 0, np.where(o == 0, 1.95, np.where(o == 2, 1.0, 0.0)),
            np.where(typ == 1, np.where(o == 1, 2.0, np.where(o == 2, 1.0, 0.0)), np.where(o == 2, 9.0, 0.0)))
        r = [1.95*pb + pt, 2*pp + pt, 9*pt]
        v = [1.95**2*pb + pt - r[0]**2, 4*pp + pt - r[1]**2, 81*pt - r[2]**2]
        rtp = np.choose(typ, r)
        var = np.choose(typ, v)
        d = np.bincount(idx, s*(rtp - c), R)
        vth = np.bincount(idx, s*s*var, R)
    return d.reshape(dealers, rounds), vth.reshape(dealers, rounds)

def run(name, dealers, rounds, seed, chunks=1, shortfall=0.0):
    rng = np.random.default_rng(seed)
    res = {k: [] for k in ("th", "cl", "max")}
    for _ in range(chunks):
        d, vth = scenario(rng, name, dealers, rounds)
        D = d.sum(1)
        Vth = vth.sum(1)
        Vcl = (d**2).sum(1)
        for k, V in (("th", Vth), ("cl", Vcl), ("max", np.maximum(Vth, Vcl))):
            res[k].append(erfc(np.abs(D / np.sqrt(V)) / np.sqrt(2)))
    out = {}
    for k, ps in res.items():
        p = np.concatenate(ps)
        out[k] = (np.mean(p <= 0.01), np.mean(p <= 0.0005), p.size)
    return out

if __name__ == "__main__":
    for name in sys.argv[1].split(","):
        for rounds in [int(x) for x in sys.argv[2].split(",")]:
            dealers, chunks = int(sys.argv[3]), int(sys.argv[4])
            r = run(name, dealers, rounds, 1, chunks)
            cells = {k: f"p<=.01 {a:.4f}  p<=.0005 {b:.5f}  n={n}" for k, (a, b, n) in r.items()}
            print(name, rounds, cells, flush=True)
