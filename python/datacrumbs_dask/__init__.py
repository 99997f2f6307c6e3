"""datacrumbs_dask: `datacrumbs analyze` over many traces on a Dask cluster.

Dask schedules; the C++ analyzer does the work. Each task runs
`datacrumbs analyze FILES... --partial P` on a worker over one subset of the traces and returns
the partial result; the client merges the partials with `datacrumbs analyze --merge`, which
writes the same text, JSON, CSV and HTML as one `datacrumbs analyze` over all the traces.
"""

from .csv_parts import csv_stems
from .inputs import expand_paths, split_balanced, split_indices
from .run import analyze_on_cluster

__all__ = ["expand_paths", "split_balanced", "split_indices", "analyze_on_cluster", "csv_stems"]
