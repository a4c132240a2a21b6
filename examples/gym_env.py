"""A Gymnasium-style environment over a stepped ccarena run (no gymnasium needed).

The agent controls one flow's congestion window. Each step it gives a
window in packets (or None to leave the window to the flow's algorithm),
the run advances by ``dt`` and the agent sees what the last interval's
trace rows say::

    env = CwndEnv("scenarios/quickstart.toml", dt="50ms")
    obs, info = env.reset(seed=1)
    terminated = truncated = False
    while not (terminated or truncated):
        obs, reward, terminated, truncated, info = env.step(40)
    result = env.close()            # the run's ccarena.Result

``reset``, ``step``, ``close`` and the 5-tuple follow Gymnasium's ``Env``
API; wrap the class in ``gymnasium.Env`` (and give it ``observation_space``
and ``action_space``, e.g. ``Box(0, inf, (6,))`` and ``Box(1, 10_000, ())``)
to use it with Gymnasium's tools.

Observation (a numpy float64 vector, :data:`OBSERVATION`): over the step's
intervals, the flow's mean rate at the bottleneck (bit/s), its cwnd, srtt
(µs) and packets in flight at the end of the step, the bottleneck's mean
backlog (packets) and the drops in the step. Before the flow starts (no
rows) the flow's entries are 0.

Reward: ``reward(step, env)`` of your own (``step`` is the
:class:`ccarena.Step`: its ``flows`` and ``queue`` DataFrames); by default
:func:`utilisation_minus_delay`.

Run it as a script for a demonstration: ``python examples/gym_env.py``.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping
from typing import Any

import ccarena
import numpy as np

OBSERVATION = ("rate_bps", "cwnd_pkts", "srtt_us", "inflight_pkts", "backlog_pkts", "drops_pkts")
"""The observation vector's entries, in order."""


def bottleneck_utilisation(step: ccarena.Step, env: CwndEnv) -> float:
    """Bytes that left the bottleneck in the step's intervals over what it could send in them."""
    q = step.queue
    if len(q) == 0:
        return 0.0
    seconds = len(q) * env.interval_ns / 1e9
    return float(q["tx_bytes"].sum()) * 8 / (env.rate_bps * seconds)


def utilisation_minus_delay(step: ccarena.Step, env: CwndEnv) -> float:
    """The default reward: bottleneck utilisation in the step minus the mean
    backlog as a fraction of the buffer (both in [0, 1])."""
    q = step.queue
    if len(q) == 0:
        return 0.0
    backlog = float(q["backlog_pkts"].mean()) / max(env.buffer_pkts, 1)
    return bottleneck_utilisation(step, env) - backlog


class CwndEnv:
    """One flow's congestion window as the action, a ccarena run as the world.

    ``spec`` is what :func:`ccarena.run` takes (a file, a dict, a Spec);
    ``flow`` the flow controlled; ``dt`` the step (seconds or a time string);
    ``reward(step, env) -> float``; ``max_steps`` truncates an episode;
    ``overrides`` go to the experiment (``duration="5s"``).
    """

    def __init__(
        self,
        spec: Any,
        *,
        flow: int = 0,
        dt: float | str = "20ms",
        reward: Callable[[ccarena.Step, CwndEnv], float] = utilisation_minus_delay,
        max_steps: int | None = None,
        **overrides: Any,
    ) -> None:
        self.spec = spec
        self.flow = flow
        self.dt = dt
        self.reward_fn = reward
        self.max_steps = max_steps
        self.overrides = overrides
        self.sim: ccarena.Simulation | None = None
        self.steps = 0

    # What the experiment says, known once reset.
    @property
    def rate_bps(self) -> int:
        return int(self._sim.spec.engine.bottleneck.rate_bps)

    @property
    def interval_ns(self) -> int:
        return int(self._sim.spec.engine.interval_ns)

    @property
    def buffer_pkts(self) -> int:
        b = self._sim.spec.engine.bottleneck
        return int(b.buffer_pkts or b.buffer_bytes // self.wire_bytes)

    @property
    def wire_bytes(self) -> int:
        f = self._sim.spec.engine.flows[self.flow]
        return int(f.mss) + int(f.header_bytes)

    @property
    def bdp_pkts(self) -> float:
        """The controlled flow's bandwidth-delay product, packets on the wire."""
        rtt_ns = int(self._sim.spec.engine.flows[self.flow].rtt_ns)
        return self.rate_bps * rtt_ns / 1e9 / 8 / self.wire_bytes

    @property
    def _sim(self) -> ccarena.Simulation:
        if self.sim is None:
            raise RuntimeError("call reset() first")
        return self.sim

    def reset(
        self, *, seed: int | None = None, options: Mapping[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Starts a new run (the experiment's seed, or ``seed``) at time 0."""
        self.close()
        self.sim = ccarena.Simulation(self.spec, seed=seed, **self.overrides)
        self.steps = 0
        return np.zeros(len(OBSERVATION)), {"time_s": 0.0}

    def step(self, action: float | None) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Sets the window to ``action`` packets (rounded, at least 2; None: left
        alone) and the slow-start threshold with it, so that the algorithm
        grows the window from there by congestion avoidance instead of doubling
        it; runs ``dt`` and returns (observation, reward, terminated, truncated, info)."""
        sim = self._sim
        if sim.done:
            raise RuntimeError("the episode has ended; call reset()")
        if action is not None:
            window = max(2, round(float(action)))
            sim.set_cwnd(self.flow, window)
            sim.set_ssthresh(self.flow, window)
        s = sim.step(self.dt)
        self.steps += 1
        obs = self.observation(s)
        reward = float(self.reward_fn(s, self))
        terminated = s.done
        truncated = not terminated and self.max_steps is not None and self.steps >= self.max_steps
        return obs, reward, terminated, truncated, {"time_s": s.time_s, "step": s}

    def observation(self, s: ccarena.Step) -> np.ndarray:
        """The observation vector of :data:`OBSERVATION` from one step's rows."""
        f = s.flows[s.flows["flow"] == self.flow]
        q = s.queue
        if len(f):
            last = f.iloc[-1]
            flow_part = [float(f["rate_bps"].mean()), last["cwnd_pkts"], last["srtt_us"], last["inflight_pkts"]]
        else:
            flow_part = [0.0, 0.0, 0.0, 0.0]
        backlog = float(q["backlog_pkts"].mean()) if len(q) else 0.0
        drops = float(q["drops_pkts"].sum()) if len(q) else 0.0
        return np.asarray([*flow_part, backlog, drops], dtype=np.float64)

    def close(self) -> ccarena.Result | None:
        """Ends the run (to the end of the experiment) and returns its Result; None if none."""
        if self.sim is None:
            return None
        sim, self.sim = self.sim, None
        return sim.finish()


def _demo() -> None:
    exp = {
        "name": "gym-demo",
        "duration": "5s",
        "seed": 1,
        "topology": {"rtt": "40ms", "bottleneck": {"rate": "20Mbps", "buffer": "1bdp"}},
        "flows": [{"cc": "reno"}],
        "measure": {"interval": "10ms"},
    }
    for name in ("random", "bdp"):
        env = CwndEnv(exp, dt="40ms")
        env.reset()
        rng = random.Random(0)
        total, done = 0.0, False
        while not done:
            action = rng.uniform(1, 3 * env.bdp_pkts) if name == "random" else math.ceil(env.bdp_pkts)
            _, r, terminated, truncated, _ = env.step(action)
            total += r
            done = terminated or truncated
        result = env.close()
        assert result is not None
        s = result.summary
        print(
            f"{name:>6}: {env.steps} steps, return {total:.2f}, utilisation {s['utilization']:.3f}, "
            f"mean queue delay {s['queue']['delay_mean_ms']} ms"
        )


if __name__ == "__main__":
    _demo()
