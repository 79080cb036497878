"""Each state store's figures as the progress reports them (docs/monitoring.md), watched from the driver."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pyspark.sql.streaming.listener import StreamingQueryListener

_PARTITION = ".partition_"


@dataclass(frozen=True)
class Figure:
    """One figure of one progress: a store's (``partition`` and ``store`` set: Spark 4.1 and later report each
    operator's worst partitions, docs/monitoring.md says of which figures) or the operator's sum over its stores (``partition`` None)."""

    query: str
    batch: int
    operator: int
    name: str
    value: int
    partition: int | None = None
    store: str | None = None


def figures_of(progress: dict[str, Any]) -> list[Figure]:
    """ttlstore's figures in one ``StreamingQueryProgress`` (as its JSON reads)."""
    found = []
    for index, operator in enumerate(progress.get("stateOperators") or []):
        for key, value in (operator.get("customMetrics") or {}).items():
            if not key.startswith("ttlstore"):
                continue
            name, _, rest = key.partition(_PARTITION)
            partition, store = rest.split("_", 1) if rest else (None, None)
            found.append(Figure(progress["id"], progress["batchId"], index, name, value,
                                None if partition is None else int(partition), store))
    return found


class StoreWatch(StreamingQueryListener):
    """A listener that keeps ttlstore's figures of every progress of the session's queries, and calls ``alert``
    with a message when a store's figure (or, where Spark reports no store's own, an operator's sum) goes above its
    limit in ``limits``::

        watch = ttlstore.StoreWatch(limits={"ttlstoreSnapshotAgeMs": 15 * 60_000}, alert=log.warning)
        spark.streams.addListener(watch)
        ...
        watch.plot("local-bytes.png", "ttlstoreLocalBytes")

    Spark calls it on its listener bus, one event after another; ``figures`` and ``alerts`` may be read from any
    thread.
    """

    def __init__(self, limits: dict[str, int] | None = None, alert: Callable[[str], None] | None = None) -> None:
        super().__init__()
        self.limits = dict(limits or {})
        self._alert = alert
        self._lock = threading.Lock()
        self._figures: list[Figure] = []
        self._alerts: list[str] = []

    @property
    def figures(self) -> list[Figure]:
        with self._lock:
            return list(self._figures)

    @property
    def alerts(self) -> list[str]:
        with self._lock:
            return list(self._alerts)

    def onQueryStarted(self, event: Any) -> None:  # noqa: N802 (Spark's names)
        pass

    def onQueryProgress(self, event: Any) -> None:  # noqa: N802
        found = figures_of(json.loads(event.progress.json))
        stores = {f.name for f in found if f.partition is not None}
        over = [f for f in found if f.name in self.limits and f.value > self.limits[f.name]
                and (f.partition is not None or f.name not in stores)]
        messages = [f"ttlstore: {f.name} is {f.value:,} (limit {self.limits[f.name]:,}) in "
                    + (f"partition {f.partition} ({f.store})" if f.partition is not None else "the sum")
                    + f" of operator {f.operator}, batch {f.batch} of query {f.query}" for f in over]
        with self._lock:
            self._figures.extend(found)
            self._alerts.extend(messages)
        for message in messages:
            if self._alert is not None:
                self._alert(message)

    def onQueryIdle(self, event: Any) -> None:  # noqa: N802
        pass

    def onQueryTerminated(self, event: Any) -> None:  # noqa: N802
        pass

    def plot(self, path: str | Path, name: str) -> Path:
        """Draws figure ``name`` batch by batch into the image ``path``: each partition reported (its worst
        partitions, Spark 4.1 and later), else the operator's sum. Needs matplotlib."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        series: dict[str, list[tuple[int, int]]] = {}
        for f in self.figures:
            if f.name == name:
                label = f"partition {f.partition}" if f.partition is not None else "sum"
                series.setdefault(label, []).append((f.batch, f.value))
        fig, ax = plt.subplots(figsize=(8, 4))
        for label, points in sorted(series.items()):
            ax.plot(*zip(*sorted(points), strict=True), marker="o", label=label)
        ax.set_xlabel("batch")
        ax.set_ylabel(name)
        ax.legend()
        fig.tight_layout()
        fig.savefig(path)
        plt.close(fig)
        return Path(path)
