"""Additive noise mechanisms for a query of known sensitivity: samplers (vectorised, seeded).

Each sampler returns an array of shape ``(reps, d)``.
- Laplace coordinates, scale b: density ∏ exp(-|w_j|/b)/(2b); E||W||² = 2 d b².
- ℓ2-Laplace, scale b: density ∝ exp(-||w||₂/b); ||W|| ~ Gamma(d, b), direction uniform, so
  E||W||² = d(d+1) b². With b = Δ₂/ε it is ε-DP for ℓ2 sensitivity Δ₂ (triangle inequality).
- Gaussian N(0, σ² I).
- the staircase noise of Geng & Viswanath (2016), d = 1, scale = the sensitivity Δ, with its level ``eps`` and step
  ``gamma`` (:mod:`boundcalc.mechanisms.staircase`; docs/methods/staircase.md).

Samplers with parameters of their own (the staircase) take them as keyword arguments.
"""
from __future__ import annotations

import numpy as np


def laplace(rng: np.random.Generator, reps: int, d: int, scale: float) -> np.ndarray:
    return rng.laplace(0.0, scale, size=(reps, d))


def l2_laplace(rng: np.random.Generator, reps: int, d: int, scale: float) -> np.ndarray:
    radius = rng.gamma(shape=d, scale=scale, size=(reps, 1))
    direction = rng.standard_normal((reps, d))
    direction /= np.linalg.norm(direction, axis=1, keepdims=True)
    return radius * direction


def gaussian(rng: np.random.Generator, reps: int, d: int, sigma: float) -> np.ndarray:
    return rng.normal(0.0, sigma, size=(reps, d))


def staircase(rng: np.random.Generator, reps: int, d: int, scale: float, *, eps: float, gamma: float) -> np.ndarray:
    from .staircase import sample

    return sample(rng, reps, d, scale, eps=eps, gamma=gamma)


SAMPLERS = {"laplace": laplace, "l2-laplace": l2_laplace, "gaussian": gaussian, "staircase": staircase}
