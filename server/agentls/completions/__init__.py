"""Inline completions and next-edit suggestions: the request pipeline and the pure Zeta core."""
