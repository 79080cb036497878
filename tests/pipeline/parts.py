"""What `make` fetches for the pipeline (tests/test_kafka_pipeline.py, `make pipeline-demo`): the Kafka broker's
jars (tests/pipeline/broker.xml), Spark's Kafka connector (tests/pipeline/connector.xml) and Delta Lake's jars
for the one Spark line its release supports (tests/pipeline/delta.xml, which names that line).
"""

from __future__ import annotations

from pathlib import Path
from xml.etree import ElementTree

ROOT = Path(__file__).resolve().parents[2]
BROKER = ROOT / ".build" / "kafka" / "broker"
CONNECTOR = ROOT / ".build" / "kafka" / "connector"
DELTA = ROOT / ".build" / "delta"
_POM = "{http://maven.apache.org/POM/4.0.0}"
#: The Spark line (``"4.2"``) whose Delta release the Makefile fetches into DELTA.
DELTA_LINE = ElementTree.parse(ROOT / "tests" / "pipeline" / "delta.xml").findtext(
    f"{_POM}properties/{_POM}spark.line")
