"""Connecting to Ray (the optional ``ray`` extra) for distributed self-play and evaluation.

One process holds one Ray connection: :func:`connect` starts a local Ray (``address=""``),
joins the cluster this machine belongs to (``"auto"``) or a given head (``"host:port"``,
``"ray://host:port"``), checks that the cluster has the CPUs the actors will ask for, and
fails within a bounded time with :class:`RayUnavailable` (one line naming the problem)
instead of hanging or printing Ray's own traceback. :func:`disconnect` shuts down a Ray that
:func:`connect` started. docs/distributed.md explains the cluster side.
"""
from __future__ import annotations

import logging
import os
import socket
from typing import Any, Optional

log = logging.getLogger(__name__)

__all__ = ["RayUnavailable", "require_ray", "connect", "disconnect", "cluster_cpus"]

#: How long a connection attempt may take before it is reported as unreachable.
CONNECT_TIMEOUT_S = 20.0

_started_here = False


class RayUnavailable(RuntimeError):
    """Ray is missing, unreachable or too small for what was asked."""


def require_ray() -> Any:
    """The ``ray`` module, or RayUnavailable saying how to install it."""
    try:
        import ray
    except ImportError:
        raise RayUnavailable("Ray is not installed: pip install '.[ray]' (or bash scripts/install.sh --ray), "
                             "or use the threads backend") from None
    return ray


def _host_port(address: str) -> Optional[tuple[str, int]]:
    target = address[len("ray://"):] if address.startswith("ray://") else address
    host, sep, port = target.rpartition(":")
    if not sep or not host:
        return None
    try:
        return host, int(port)
    except ValueError:
        return None


def _check_reachable(address: str, timeout: float) -> None:
    hp = _host_port(address)
    if hp is None:
        raise RayUnavailable(f"ray.address must be '', 'auto', 'host:port' or 'ray://host:port', got {address!r}")
    try:
        with socket.create_connection(hp, timeout=timeout):
            pass
    except OSError as e:
        raise RayUnavailable(f"ray.address {address!r} is unreachable ({e.strerror or e})") from None


def connect(address: str = "", num_cpus: Optional[int] = None, needed_cpus: int = 1,
            timeout: float = CONNECT_TIMEOUT_S) -> None:
    """Makes sure this process is connected to Ray with at least ``needed_cpus`` CPUs.

    A connection made earlier in the process is reused. Raises RayUnavailable (Ray missing,
    address unreachable or malformed, or the cluster smaller than ``needed_cpus``).
    """
    global _started_here
    ray = require_ray()
    if not ray.is_initialized():
        if address not in ("", "auto"):
            _check_reachable(address, min(timeout, 5.0))
        kwargs: dict[str, Any] = {"include_dashboard": False, "logging_level": logging.WARNING,
                                  "log_to_driver": False}
        if address:
            kwargs["address"] = address
        else:
            kwargs["address"] = "local"  # a new instance, never one found running on this machine
            kwargs["num_cpus"] = num_cpus or os.cpu_count() or 1
            # Ray runs its workers at nice 15 by default; here the actors are the work itself
            # (at nice 15 they get a few percent of a core whenever the trainer or anything else runs).
            kwargs["_system_config"] = {"worker_niceness": 0}
        if address.startswith("ray://"):
            kwargs.pop("include_dashboard")
        try:
            # On the calling (main) thread: Ray installs its signal handlers there. A head that
            # does not answer was refused above, so this does not wait long.
            ray.init(**kwargs)
        except Exception as e:
            where = "start a local Ray" if not address else f"connect to Ray at {address!r}"
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise RayUnavailable(f"could not {where}: {first}") from None
        _started_here = not address
    have = cluster_cpus()
    if have < needed_cpus:
        raise RayUnavailable(f"the Ray cluster has {have:g} CPUs, the actors need {needed_cpus} "
                             f"(ray.workers x threads per actor); lower ray.workers or add machines")


def cluster_cpus() -> float:
    """CPUs the connected Ray cluster has in all."""
    ray = require_ray()
    return float(ray.cluster_resources().get("CPU", 0.0))


def disconnect() -> None:
    """Shuts Ray down if :func:`connect` started it (a joined cluster keeps running)."""
    global _started_here
    if _started_here:
        import ray

        ray.shutdown()
        _started_here = False
