"""The text form of a cluster's status (``perfmodel cluster status``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def render_cluster_status(info: Mapping[str, Any]) -> list[str]:
    """What exists of the cluster: nothing, leftovers without state, or each host's daemon,
    namespace, cgroups and link shaping."""
    name = info["name"]
    if not info["state_file"] and not info["found"]:
        return [f"cluster {name!r}: nothing exists"]
    if not info["state_file"]:
        return [
            f"cluster {name!r}: no state, but found: {', '.join(info['found'])}",
            f"remove them with: perfmodel cluster down --name {name}",
        ]
    lines = [f"cluster {name!r}: master {info['master_url']}, conf {info['conf_dir']}"]
    for host in info["hosts"]:
        alive = "running" if host["running"] else "NOT running"
        lines.append(
            f"  {host['role']:<6} {host['namespace']:<8} {host['address']:<12} "
            f"pid {host['pid']} {alive}; cgroups {','.join(host['cgroups']) or '-'}; "
            f"{host['qdisc'] or 'no namespace'}"
        )
    return lines
