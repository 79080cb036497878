"""Every classic stateful operator emits exactly the same rows on ttlstore as on Spark's own providers.

Each query runs several rounds of one micro-batch each, stopped and restarted from its checkpoint
between rounds: in checkpoint format v1 against Spark's HDFS provider, and in checkpoint format v2
(``spark.sql.streaming.stateStore.checkpointFormatVersion=2``, which the HDFS provider refuses)
against Spark's RocksDB provider. flatMapGroupsWithState has no Python API; the JVM suite
``OperatorsEndToEndSuite`` covers it the same way.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hooks import READ_AHEAD
from operator_scenarios import FORMAT_V2, SCENARIOS, Scenario, assert_same_rows, run_scenario, shared_run
from pyspark.sql import SparkSession

from conftest import (
    CAPABILITIES,
    HAS_FORMAT_V2,
    HDFS_PROVIDER,
    ROCKSDB_PROVIDER,
    TTL_PROVIDER,
    core_params,
)

#: The scenarios Spark's RocksDB provider runs in format v2 on the line under test: Spark 4.0 fails
#: a streaming global limit in format v2, whichever the provider (test_checkpoint_v2.py asserts it).
V2_SCENARIOS = [s for s in SCENARIOS if s.name != "streaming global limit" or not CAPABILITIES["globalLimitFailsInFormatV2"]]


@pytest.mark.skipif(not HAS_FORMAT_V2, reason="Spark 3.5 has no checkpoint format v2 (ttlstore refuses the setting "
                    "there: test_spark_lines)")
@pytest.mark.parametrize("scenario", V2_SCENARIOS, ids=[s.name for s in V2_SCENARIOS])
def test_operator_under_checkpoint_format_v2_emits_the_same_rows_as_spark_rocksdb_provider(
    spark: SparkSession, shared_runs: Path, scenario: Scenario
):
    reference = shared_run(spark, shared_runs, ROCKSDB_PROVIDER, scenario, FORMAT_V2)
    ours = shared_run(spark, shared_runs, TTL_PROVIDER, scenario, FORMAT_V2)

    assert_same_rows(spark, reference, ours, scenario)
    # Every version ttlstore committed carries the checkpoint id Spark's commit log names.
    changelogs = list((ours.checkpoint / "state").rglob("ttlstore/*.changelog"))
    assert changelogs and all("_" in c.name for c in changelogs)
    commit = (ours.checkpoint / "commits" / str(len(scenario.rounds) - 1)).read_text().splitlines()
    ids = {i for per_op in json.loads(commit[1])["stateUniqueIds"].values() for part in per_op for i in part}
    assert ids and all(any(c.name == f"{len(scenario.rounds)}_{i}.changelog" for c in changelogs) for i in ids)


#: The scenarios every other Spark line runs (its core): one of each kind of state a provider keeps there (rows by
#: key; a prefix scanned and evicted by watermark; a state function's; a join's four stores; keys forgotten by
#: watermark). The others (a window's rows evicted, dropDuplicates, a global limit) take the same calls; `make
#: test-matrix` runs them there too, and test_ttl and test_checkpoint_v2 run a deduplication and a limit on every line.
LINE_CORE = ["aggregation without watermark", "session windows", "applyInPandasWithState",
             "stream-stream left outer join", "dropDuplicatesWithinWatermark"]


@pytest.mark.parametrize("scenario", core_params({s.name: s for s in SCENARIOS}, LINE_CORE))
def test_operator_emits_the_same_rows_as_spark_hdfs_provider(spark: SparkSession, shared_runs: Path, scenario: Scenario):
    reference = shared_run(spark, shared_runs, HDFS_PROVIDER, scenario)
    ours = shared_run(spark, shared_runs, TTL_PROVIDER, scenario)

    assert_same_rows(spark, reference, ours, scenario)

    # The rows really went through ttlstore: its files exist and it reported its metrics.
    assert list((ours.checkpoint / "state").rglob("ttlstore/*.changelog"))
    assert not list((reference.checkpoint / "state").rglob("ttlstore"))
    custom = ours.last_progress["stateOperators"][0]["customMetrics"]
    assert "ttlstoreCommitLatencyMs" in custom
    if scenario.name in READ_AHEAD_SERVED:
        assert sum(p["stateOperators"][0]["customMetrics"]["ttlstoreReadAheadAsked"] for p in ours.progress if p) > 0, (
            "the operator's keys were read ahead")


#: One scenario of each kind of operator the read-ahead serves (docs/read-ahead.md): an aggregation's restore, a
#: state function's, a deduplication's.
READ_AHEAD_SERVED = ["aggregation without watermark", "applyInPandasWithState", "dropDuplicatesWithinWatermark"]


#: Each fault with each served operator; `make test` runs one operator per fault (each operator once), `make chaos`
#: the rest.
READ_AHEAD_FAULTS = [
    pytest.param(fault, name, id=f"{fault}-{name}", marks=[] if i == j else [pytest.mark.long])
    for i, fault in enumerate(["wrong", "none", "fail"]) for j, name in enumerate(READ_AHEAD_SERVED)
]


@pytest.mark.parametrize(("fault", "name"), READ_AHEAD_FAULTS)
def test_a_read_ahead_that_reads_wrong_keys_none_or_fails_changes_no_row(
    spark: SparkSession, shared_runs: Path, tmp_path: Path, fault: str, name: str
):
    scenario = next(s for s in SCENARIOS if s.name == name)
    reference = shared_run(spark, shared_runs, HDFS_PROVIDER, scenario)
    ours = run_scenario(spark, TTL_PROVIDER, tmp_path, scenario, {READ_AHEAD: fault})
    assert_same_rows(spark, reference, ours, scenario)
    metrics = [p["stateOperators"][0]["customMetrics"] for p in ours.progress if p]
    assert sum(m["ttlstoreReadAheadAsked"] for m in metrics) > 0
    read = sum(m["ttlstoreReadAheadCached"] + m["ttlstoreReadAheadBrought"] for m in metrics)
    failed = sum(m["ttlstoreReadAheadFailed"] for m in metrics)
    if fault == "none":
        assert (read, failed) == (0, 0), "nothing was read ahead"
    elif fault == "fail":
        assert read == 0 and failed > 0, "every read ahead failed"
    else:
        assert read > 0 and failed == 0, "other keys were read ahead"
