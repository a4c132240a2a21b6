"""Campaigns: grids of runs with repeats, a result store that survives being killed, on every core or on Dask.

* :mod:`.grid` — ``[sweep]``: axes, zipped paths, repeats and their seeds, baselines, run ids;
* :mod:`.store` — the campaign's folder: run folders, failures, sweep.toml;
* :mod:`.catalogue` — runs.parquet and run_flows.parquet;
* :mod:`.execute` — the local process pool and the Dask executor;
* :mod:`.campaign` — :func:`sweep`, :class:`Campaign` and :func:`open`.
"""

from .campaign import Campaign, CampaignInterrupted, open, sweep
from .grid import derive_seed

__all__ = ["Campaign", "CampaignInterrupted", "derive_seed", "open", "sweep"]
