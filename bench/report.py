"""The results table: one row per measure, agentls against its baseline, as a ratio."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Row:
    measure: str
    value: float
    unit: str
    baseline: float | None
    baseline_name: str
    goal: str
    passed: bool | None
    """None: reported for information, without a goal."""

    @property
    def ratio(self) -> float | None:
        return self.value / self.baseline if self.baseline else None


def at_most(
    measure: str,
    value: float,
    unit: str,
    limit: float,
    baseline: float | None = None,
    baseline_name: str = "",
) -> Row:
    """A row whose goal is a ceiling on the value itself."""
    goal = f"≤ {number(limit)} {unit}"
    return Row(measure, value, unit, baseline, baseline_name, goal, value <= limit)


def at_least(measure: str, value: float, unit: str, limit: float) -> Row:
    """A row whose goal is a floor on the value itself."""
    return Row(measure, value, unit, None, "", f"≥ {number(limit)} {unit}", value >= limit)


def ratio_at_most(
    measure: str, value: float, unit: str, baseline: float, baseline_name: str, limit: float
) -> Row:
    """A row whose goal is a ceiling on value / baseline."""
    passed = value <= limit * baseline
    return Row(measure, value, unit, baseline, baseline_name, f"≤ {limit:g}x", passed)


def added_at_most(
    measure: str, value: float, unit: str, baseline: float, baseline_name: str, limit: float
) -> Row:
    """A row whose goal is a ceiling on what value adds to baseline."""
    goal = f"≤ +{number(limit)} {unit}"
    return Row(measure, value, unit, baseline, baseline_name, goal, value - baseline <= limit)


def info(measure: str, value: float, unit: str, baseline: float | None, baseline_name: str) -> Row:
    return Row(measure, value, unit, baseline, baseline_name, "—", None)


def number(value: float) -> str:
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def markdown(rows: list[Row]) -> str:
    lines = [
        "| measure | agentls | baseline | ratio | goal | result |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for row in rows:
        baseline = "—"
        if row.baseline is not None:
            baseline = f"{number(row.baseline)} {row.unit} ({row.baseline_name})"
        ratio = f"{row.ratio:.3g}x" if row.ratio is not None else "—"
        result = {True: "pass", False: "**FAIL**", None: "—"}[row.passed]
        lines.append(
            f"| {row.measure} | {number(row.value)} {row.unit} | {baseline} | {ratio} "
            f"| {row.goal} | {result} |"
        )
    return "\n".join(lines)
