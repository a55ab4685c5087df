"""What a run costs: nodes × hourly price × runtime, billed the way the provider bills.

Providers bill whole increments (per second, per minute, per hour) with a minimum, so a
run of 61 s on per-minute billing costs two minutes; that rounding is what makes a larger,
faster cluster cheaper than a smaller one on hourly billing, and the search must see it.
"""

from __future__ import annotations

import math

from perfmodel.recommend.catalog import MachineType


def billed_seconds(runtime_s: float, machine: MachineType) -> float:
    """Seconds charged for a VM that ran ``runtime_s``: whole increments, at least the minimum."""
    g = machine.billing_granularity_s
    whole = math.ceil(max(runtime_s, 0.0) / g - 1e-9) * g
    return float(max(whole, machine.min_billing_s))


def run_cost(runtime_s: float, machine: MachineType, nodes: int) -> float:
    """USD for ``nodes`` VMs of a type kept for the run (the driver's node counted by caller)."""
    return nodes * machine.price_per_hour * billed_seconds(runtime_s, machine) / 3600.0
