"""Turning a run's raw output into numbers, tables and figures.

* :mod:`.metrics` — metric functions and ``summarize`` (summary.json);
* :mod:`.tables` — the Arrow tables of flows.parquet, queue.parquet, transfers.parquet;
* :mod:`.plots` — the registry of named figures;
* :mod:`.comparison` — simulator against kernel: the table of differences and the figure.

A new metric goes into :mod:`.metrics` (and ``summarize`` if every run
should report it); a new figure is a recipe registered in :mod:`.plots`.
"""
