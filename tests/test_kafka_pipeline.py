"""A real pipeline end to end (docs/pipeline.md): a Kafka topic on a real broker (one KRaft node,
tests/pipeline/broker.py) into a deduplication with an event-time TTL into a table, the driver killed with SIGKILL
mid-stream and started again: into a Parquet table on the development line, against the same pipeline on Spark's
HDFS provider, and into a Delta table on the line Delta's release supports (tests/pipeline/delta.xml).

Events arrive in rounds while the query runs (tests/pipeline/events.py): new events, redeliveries within the TTL
(dropped) and redeliveries after it (kept, as the TTL promises). The table must hold every event exactly once, and
each late redelivery once more: what Spark's HDFS provider writes from the same topic, plus the late redeliveries
that a deduplication without TTL never forgets.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from collections import Counter
from datetime import datetime
from pathlib import Path

import pytest
from pipeline.broker import KafkaBroker
from pipeline.dedup import table_events
from pipeline.events import LATE, LATE_AFTER, ROUNDS, TOPIC, TTL_OPTION, Event, expected, record, round_events
from pipeline.parts import CONNECTOR, DELTA, DELTA_LINE
from processes import kill_group
from pyspark.sql import SparkSession

from conftest import ROOT, RUNNING_LINE, SPARK_LINES, run_script

DRIVER = ROOT / "tests" / "pipeline" / "dedup.py"
#: The rounds in the topic when the query starts, and the batches it commits before the kill.
BEFORE_START, KILL_AFTER = 6, 3

on_the_development_line = pytest.mark.skipif(
    RUNNING_LINE != SPARK_LINES[-1].line, reason="`make` fetches Spark's Kafka connector for the development line")
on_deltas_line = pytest.mark.skipif(
    RUNNING_LINE != DELTA_LINE, reason=f"Delta's release the Makefile fetches is for Spark {DELTA_LINE}")


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory):
    with KafkaBroker(tmp_path_factory.mktemp("kafka")) as running:
        running.create_topic(TOPIC, partitions=2)
        yield running


def produce(broker: KafkaBroker, rounds: range) -> int:
    return broker.produce(TOPIC, (record(event) for r in rounds for event in round_events(r)))


def driver(bootstrap: str, work: Path, provider: str, *extra: str) -> list[str]:
    return [sys.executable, str(DRIVER), "--bootstrap", bootstrap, "--topic", TOPIC, "--table", str(work / "table"),
            "--checkpoint", str(work / "checkpoint"), "--provider", provider, "--connector", str(CONNECTOR),
            "--ttl", TTL_OPTION, *extra]


def run_until_idle(command: list[str]) -> dict:
    """Runs the driver until it read what the topic holds; returns its RESULT (the batches it ran, ...)."""
    return run_script(command[0], Path(command[1]), *command[2:], "--until-idle", cwd=ROOT)


def committed(checkpoint: Path) -> int:
    commits = checkpoint / "commits"
    return len([f for f in commits.iterdir() if f.name.isdigit()]) if commits.is_dir() else 0


def killed_mid_stream_and_restarted(broker: KafkaBroker, command: list[str], checkpoint: Path) -> dict:
    """Sends the first rounds, runs ``command`` until it committed KILL_AFTER batches, sends a round while it runs,
    kills it (SIGKILL, its JVM with it), sends the rest and runs it again until idle; returns the restart's
    RESULT, with ``sent``, the records sent."""
    sent = produce(broker, range(BEFORE_START))
    with tempfile.TemporaryFile("w+") as out:
        child = subprocess.Popen(command, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, text=True,
                                 start_new_session=True)
        try:
            deadline = time.monotonic() + 600
            while committed(checkpoint) < KILL_AFTER and child.poll() is None:
                assert time.monotonic() < deadline, "the query committed too few batches in 10 minutes"
                time.sleep(0.2)
            sent += produce(broker, range(BEFORE_START, BEFORE_START + 1))  # while it runs
        finally:
            kill_group(child)  # SIGKILL: the driver and its JVM, mid-batch
        out.seek(0)
        before_kill = out.read()
    assert child.returncode == -9 and "batch 0:" in before_kill, before_kill[-3000:]
    at_kill = committed(checkpoint)
    assert at_kill >= KILL_AFTER, before_kill[-3000:]

    sent += produce(broker, range(BEFORE_START + 1, ROUNDS))
    restarted = run_until_idle(command)
    assert restarted["batches"] and min(restarted["batches"]) == at_kill, \
        "the restart goes on from the batch the kill interrupted"
    return {**restarted, "sent": sent}


@on_the_development_line
def test_a_kafka_pipeline_killed_mid_stream_writes_each_event_once_and_redeliveries_as_its_ttl_says(
        broker: KafkaBroker, spark: SparkSession, tmp_path: Path):
    killed = tmp_path / "ttlstore"
    sent = killed_mid_stream_and_restarted(broker, driver(broker.bootstrap, killed, "ttlstore"),
                                           killed / "checkpoint")["sent"]
    reference = tmp_path / "hdfs"
    run_until_idle(driver(broker.bootstrap, reference, "hdfs"))

    got, spark_s, want = table_events(spark, killed / "table"), table_events(spark, reference / "table"), \
        expected(ROUNDS)
    assert sum(want.values()) < sent, "the topic held redeliveries to drop"
    assert spark_s == {event: 1 for event in want}, "Spark's HDFS provider writes each event exactly once"
    late_kept = got - spark_s
    assert sum(late_kept.values()) == LATE * (ROUNDS - LATE_AFTER), (
        f"each redelivery after the TTL is written again, none within it: {sum(late_kept.values())} extra rows")
    assert got == want, "every event exactly once despite the kill, and each late redelivery once more"


@pytest.mark.every_line
@on_deltas_line
def test_a_delta_table_fed_by_a_killed_kafka_pipeline_holds_each_event_once_and_late_redeliveries_again(
        broker: KafkaBroker, tmp_path: Path):
    killed = tmp_path / "ttlstore"
    restarted = killed_mid_stream_and_restarted(
        broker, driver(broker.bootstrap, killed, "ttlstore", "--delta", str(DELTA), "--report-table"),
        killed / "checkpoint")

    got: Counter[Event] = Counter({(key, datetime.fromisoformat(at)): n for key, at, n in restarted["table"]})
    want = expected(ROUNDS)
    assert sum(want.values()) < restarted["sent"], "the topic held redeliveries to drop"
    assert (killed / "table" / "_delta_log").is_dir(), "the table is a Delta table"
    assert got == want, "every event exactly once despite the kill, and each late redelivery once more"
