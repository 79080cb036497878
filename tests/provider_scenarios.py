"""Queries that run side by side in one session, each on the provider its session named when it started
(tests/test_provider_per_query.py)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd
from pyspark.sql import DataFrame, Row, SparkSession
from pyspark.sql.streaming import StreamingQuery
from pyspark.sql.types import LongType, StringType, StructField, StructType

import ttlstore

from conftest import restoring

PROVIDER_KEY = ttlstore.settings.PROVIDER_CLASS_KEY
TTL_KEY = ttlstore.settings.PREFIX + "ttl"
TTLSTORE = "io.ttlstore.TtlStateStoreProvider"
HDFS = "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider"
ROCKSDB = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
EVENTS = StructType([StructField("key", StringType()), StructField("v", LongType())])


@contextmanager
def session_conf(spark: SparkSession, **conf: str) -> Iterator[None]:
    """Sets `conf` in the session for the block, then puts back what it held."""
    with restoring(spark, conf):
        for key, value in conf.items():
            spark.conf.set(key, value)
        yield


class Stream:
    """A query over a directory of JSON event files, collecting what each batch emits."""

    def __init__(self, spark: SparkSession, workdir: Path, build: Callable[[DataFrame], DataFrame], mode: str):
        self.spark, self.build, self.mode = spark, build, mode
        self.input = workdir / "input"
        self.input.mkdir(parents=True)
        self.checkpoint = workdir / "checkpoint"
        self.emitted: list[Row] = []
        self.files = 0
        self.query = self.start()

    def start(self) -> StreamingQuery:
        """Starts the query (again, on the same checkpoint and input, once it was stopped)."""
        stream = self.spark.readStream.schema(EVENTS).json(str(self.input))
        self.query = (
            self.build(stream).writeStream.outputMode(self.mode)
            .foreachBatch(lambda df, _id: self.emitted.extend(df.collect()))
            .option("checkpointLocation", str(self.checkpoint))
            .trigger(processingTime="200 milliseconds")
            .start()
        )
        return self.query

    def feed(self, *keys: str) -> list[Row]:
        """Writes one file of events with `keys` and returns what the query emitted for it."""
        before = len(self.emitted)
        tmp = self.input / f".{self.files}.tmp"
        tmp.write_text("".join(json.dumps({"key": k, "v": i}) + "\n" for i, k in enumerate(keys)))
        tmp.rename(self.input / f"{self.files}.json")
        self.files += 1
        self.query.processAllAvailable()
        return self.emitted[before:]

    def pinned_provider(self) -> str:
        """The provider Spark pinned in the checkpoint's newest offset log entry."""
        newest = max((p for p in (self.checkpoint / "offsets").iterdir() if p.name.isdigit()), key=lambda p: int(p.name))
        return json.loads(newest.read_text().splitlines()[1])["conf"][PROVIDER_KEY]


def running_count_processor() -> Any:
    """transformWithStateInPandas: a running count per key, in a value state (Spark 4.0 and later)."""
    from pyspark.sql.streaming.stateful_processor import StatefulProcessor, StatefulProcessorHandle

    class RunningCount(StatefulProcessor):
        def init(self, handle: StatefulProcessorHandle) -> None:
            self.count = handle.getValueState("count", StructType([StructField("n", LongType())]))

        def handleInputRows(self, key: Any, rows: Iterator[pd.DataFrame], timerValues: Any) -> Iterator[pd.DataFrame]:
            n = self.count.get()[0] if self.count.exists() else 0
            n += sum(len(frame) for frame in rows)
            self.count.update((n,))
            yield pd.DataFrame({"key": [key[0]], "count": [n]})

        def close(self) -> None:
            pass

    return RunningCount()
