"""The application layer: problem discovery (catalog), the API (rate, resolve, evaluate_curve), the
simulation checks, planning, tables and the shipped documentation pages.
"""
