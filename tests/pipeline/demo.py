"""`make pipeline-demo`: the Kafka pipeline of docs/pipeline.md on this machine in a few minutes. It starts a Kafka
broker (one KRaft node), sends the events of tests/pipeline/events.py round by round while a TTL'd deduplication on
ttlstore writes them into a Parquet table, prints a line per batch, and then what the table holds against what the
TTL promises: every event once, redeliveries within the TTL dropped, those after it kept.
"""

from __future__ import annotations

import tempfile
import threading
import time
from pathlib import Path

from pipeline import dedup
from pipeline.broker import KafkaBroker
from pipeline.events import EARLY, LATE, LATE_AFTER, NEW, ROUNDS, TOPIC, TTL, TTL_OPTION, expected, record, round_events
from pipeline.parts import CONNECTOR


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="ttlstore-pipeline-"))
    print(f"starting a Kafka broker (its data and the table under {work})", flush=True)
    with KafkaBroker(work / "kafka") as broker:
        broker.create_topic(TOPIC, partitions=2)
        spark = dedup.session("ttlstore", CONNECTOR, TTL_OPTION)
        table = work / "table"
        query = dedup.start(spark, broker.bootstrap, TOPIC, str(table), str(work / "checkpoint"))

        def send() -> None:
            for r in range(ROUNDS):
                sent = broker.produce(TOPIC, (record(e) for e in round_events(r)))
                print(f"round {r}: sent {sent} events, an hour of event time after the last", flush=True)
                time.sleep(2)

        producer = threading.Thread(target=send)
        producer.start()
        shown = dedup.follow(query, producer.is_alive)
        query.processAllAvailable()
        dedup.follow(query, lambda: False, shown)
        query.stop()

        got, want = dedup.table_events(spark, table), expected(ROUNDS)
        redelivered = sum(len(round_events(r)) - NEW for r in range(ROUNDS))
        print(f"\n{NEW * ROUNDS} events and {redelivered} redeliveries sent: {EARLY} a round within the TTL of "
              f"{TTL.total_seconds() / 3600:g} hours, and from round {LATE_AFTER} on {LATE} a round after it.")
        print(f"The table holds {sum(got.values())} rows: {len(got)} events once each, and "
              f"{sum(got.values()) - len(got)} redeliveries after the TTL a second time.")
        print("As the TTL promises." if got == want else "NOT what the TTL promises: see tests/test_kafka_pipeline.py.")
        spark.stop()
        if got != want:
            raise SystemExit(1)


if __name__ == "__main__":
    main()
