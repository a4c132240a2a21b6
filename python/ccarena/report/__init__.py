"""HTML reports of runs and campaigns: ``ccarena report DIR`` writes DIR/report.html.

One self-contained file (figures inline as SVG, styles inline, no scripts
and nothing fetched from the network), so it can be mailed, archived or
opened anywhere:

* a run: the scenario (spec.toml), its provenance when recorded, the
  metrics of summary.json (aggregate and per flow), and the run's figure:
  rate at the bottleneck and cwnd side by side in time, and the queue;
* a campaign: the grid, the provenance, the metrics per point with 95 %
  confidence intervals, each headline metric against each swept parameter
  (one line per algorithm, 95 % bars), and the ensemble time series of the
  rate at the bottleneck with its confidence band.

:func:`write_report` picks the kind from the folder.
"""

from .write import write_report

__all__ = ["write_report"]
