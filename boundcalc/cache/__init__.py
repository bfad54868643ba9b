"""Storage below everything else: the sharded JSON stores on disk and the exact, eval-free codec of
sympy expressions and result records. Imports nothing else of boundcalc.
"""
