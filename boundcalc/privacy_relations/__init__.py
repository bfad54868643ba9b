"""Relations between privacy definitions (Barber & Duchi 2014, Section 2; docs/methods/relations.md):
the table of relations, the conversions built from it, and the CHTP ingredients.
"""
