"""A Kafka broker of the pipeline's own (tests/test_kafka_pipeline.py, `make pipeline-demo`): one KRaft node, broker
and controller in one JVM, from the jars `make` fetches into .build/kafka/broker (tests/pipeline/broker.xml), on
free local ports. Its data and log go under the caller's directory; it is killed with its process group when done.
"""

from __future__ import annotations

import base64
import socket
import subprocess
import time
import uuid
from collections.abc import Iterable
from pathlib import Path
from types import TracebackType

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic
from pipeline.parts import BROKER
from processes import kill_group


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return int(s.getsockname()[1])


class KafkaBroker:
    """``with KafkaBroker(work) as broker:`` a broker at ``broker.bootstrap`` for as long as the block runs."""

    def __init__(self, work: Path, start_timeout_s: float = 120) -> None:
        if not BROKER.is_dir():
            raise FileNotFoundError(f"the Kafka broker's jars are not in {BROKER}: run `make .build/kafka/.fetched`")
        self.work = work
        self.start_timeout_s = start_timeout_s
        self.port, self.controller_port = _free_port(), _free_port()
        self.bootstrap = f"localhost:{self.port}"
        self._process: subprocess.Popen[bytes] | None = None

    def _java(self, main: str, *args: str) -> list[str]:
        return ["java", "-Xmx512m", "-cp", f"{BROKER}/*", main, *args]

    def _write_config(self) -> Path:
        config = self.work / "server.properties"
        config.write_text("\n".join([
            "process.roles=broker,controller",
            "node.id=1",
            f"controller.quorum.voters=1@localhost:{self.controller_port}",
            f"listeners=PLAINTEXT://localhost:{self.port},CONTROLLER://localhost:{self.controller_port}",
            f"advertised.listeners=PLAINTEXT://localhost:{self.port}",
            "controller.listener.names=CONTROLLER",
            "inter.broker.listener.name=PLAINTEXT",
            "listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
            f"log.dirs={self.work / 'data'}",
            # One node: every internal topic has one replica.
            "offsets.topic.replication.factor=1",
            "transaction.state.log.replication.factor=1",
            "transaction.state.log.min.isr=1",
            "share.coordinator.state.topic.replication.factor=1",
            "share.coordinator.state.topic.min.isr=1",
            "group.initial.rebalance.delay.ms=0",
            "auto.create.topics.enable=false",
        ]) + "\n")
        return config

    def __enter__(self) -> KafkaBroker:
        self.work.mkdir(parents=True, exist_ok=True)
        config = self._write_config()
        cluster = "-"
        while cluster.startswith("-"):  # as Kafka's Uuid.randomUuid: StorageTool reads "-..." as an option
            cluster = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        subprocess.run(self._java("kafka.tools.StorageTool", "format", "-t", cluster, "-c", str(config)),
                       check=True, capture_output=True, timeout=self.start_timeout_s)
        with open(self.work / "broker.log", "wb") as log:
            self._process = subprocess.Popen(self._java("kafka.Kafka", str(config)), stdout=log,
                                             stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + self.start_timeout_s
        admin = AdminClient({"bootstrap.servers": self.bootstrap})
        while True:
            if self._process.poll() is not None:
                raise RuntimeError(f"the Kafka broker exited with {self._process.returncode}: "
                                   f"{(self.work / 'broker.log').read_text()[-3000:]}")
            try:
                admin.list_topics(timeout=2)
                return self
            except Exception:  # the broker is not answering yet
                if time.monotonic() > deadline:
                    self.__exit__(None, None, None)
                    raise TimeoutError(f"the Kafka broker at {self.bootstrap} did not answer within "
                                       f"{self.start_timeout_s} s (its log: {self.work / 'broker.log'})") from None
                time.sleep(0.5)

    def create_topic(self, topic: str, partitions: int) -> None:
        admin = AdminClient({"bootstrap.servers": self.bootstrap})
        for future in admin.create_topics([NewTopic(topic, num_partitions=partitions, replication_factor=1)]).values():
            future.result(timeout=60)

    def produce(self, topic: str, records: Iterable[tuple[str, str]]) -> int:
        """Sends (key, value) records with an idempotent producer and waits until the broker took them all."""
        producer = Producer({"bootstrap.servers": self.bootstrap, "enable.idempotence": True})
        sent = 0
        for key, value in records:
            producer.produce(topic, key=key, value=value)
            sent += 1
        if producer.flush(60) != 0:
            raise TimeoutError(f"the broker at {self.bootstrap} did not take every record within 60 s")
        return sent

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        if self._process is not None:
            kill_group(self._process)
            self._process = None
