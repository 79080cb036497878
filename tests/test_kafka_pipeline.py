"""A real pipeline end to end (docs/pipeline.md): a Kafka topic on a real broker (one KRaft node,
tests/pipeline/broker.py) into a deduplication with an event-time TTL into a Parquet table, the driver killed
with SIGKILL mid-stream and started again, against the same pipeline on Spark's HDFS provider.

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
from pathlib import Path

import pytest
from pipeline.broker import CONNECTOR, KafkaBroker
from pipeline.dedup import table_events
from pipeline.events import LATE, LATE_AFTER, ROUNDS, TOPIC, TTL_OPTION, expected, record, round_events
from processes import kill_group
from pyspark.sql import SparkSession

from conftest import ROOT, RUNNING_LINE, SPARK_LINES, run_script

DRIVER = ROOT / "tests" / "pipeline" / "dedup.py"
#: The rounds in the topic when the query starts, and the batches it commits before the kill.
BEFORE_START, KILL_AFTER = 6, 3


pytestmark = pytest.mark.skipif(RUNNING_LINE != SPARK_LINES[-1].line,
                                reason="`make` fetches Spark's Kafka connector for the development line alone")


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


def run_until_idle(command: list[str]) -> list[int]:
    """Runs the driver until it read what the topic holds; returns the batches it ran."""
    return list(run_script(command[0], Path(command[1]), *command[2:], "--until-idle", cwd=ROOT)["batches"])


def committed(checkpoint: Path) -> int:
    commits = checkpoint / "commits"
    return len([f for f in commits.iterdir() if f.name.isdigit()]) if commits.is_dir() else 0


def test_a_kafka_pipeline_killed_mid_stream_writes_each_event_once_and_redeliveries_as_its_ttl_says(
        broker: KafkaBroker, spark: SparkSession, tmp_path: Path):
    sent = produce(broker, range(BEFORE_START))
    killed = tmp_path / "ttlstore"
    with tempfile.TemporaryFile("w+") as out:
        child = subprocess.Popen(driver(broker.bootstrap, killed, "ttlstore"), cwd=ROOT, stdout=out,
                                 stderr=subprocess.STDOUT, text=True, start_new_session=True)
        try:
            deadline = time.monotonic() + 600
            while committed(killed / "checkpoint") < KILL_AFTER and child.poll() is None:
                assert time.monotonic() < deadline, "the query committed too few batches in 10 minutes"
                time.sleep(0.2)
            sent += produce(broker, range(BEFORE_START, BEFORE_START + 1))  # while it runs
        finally:
            kill_group(child)  # SIGKILL: the driver and its JVM, mid-batch
        out.seek(0)
        before_kill = out.read()
    assert child.returncode == -9 and "batch 0:" in before_kill, before_kill[-3000:]
    at_kill = committed(killed / "checkpoint")
    assert at_kill >= KILL_AFTER, before_kill[-3000:]

    sent += produce(broker, range(BEFORE_START + 1, ROUNDS))
    restarted = run_until_idle(driver(broker.bootstrap, killed, "ttlstore"))
    assert restarted and min(restarted) == at_kill, "the restart goes on from the batch the kill interrupted"
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
