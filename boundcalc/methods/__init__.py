"""Reusable lower-bound machinery (Le Cam, Fano, Assouad, uniformity of mass, contractions, van Trees)."""
