"""The shared machinery: errors, parameters, privacy models, point models, sympy helpers, the solver, the
Bound / Problem / Entry records and their registry, and the high-precision re-evaluation of certified bounds.
"""
