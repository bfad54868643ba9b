"""Privatisation mechanisms: closed-form risks and vectorised numpy samplers side by side."""
