"""Runs some rounds of the cross-line upgrade scenario with the pyspark of the interpreter that runs it.

``python upgrade_rounds.py WORKDIR FIRST COUNT`` runs rounds FIRST to FIRST+COUNT-1 of a TTL'd
deduplication and a TTL'd aggregation on ttlstore, each on its checkpoint under WORKDIR (continuing
what earlier rounds left there, whichever Spark line ran them), and prints one line ``RESULT {json}``:
the Spark version and each query's output per round. tests/test_line_upgrade.py runs it with each
line's interpreter in turn.
"""

from __future__ import annotations

import json
import sys
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pyspark.sql.types import LongType, StringType, StructField, StructType  # noqa: E402

import ttlstore  # noqa: E402

from conftest import TTL_PROVIDER, local_session_builder, run_rounds  # noqa: E402

EVENTS = StructType([StructField("key", StringType()), StructField("t", LongType())])
T0 = 1_763_800_000_000
MINUTE = 60_000
CLOCK_KEY = ttlstore.settings.OPTIONS["testing_clock_ms"][0]
#: (minutes after T0, keys) per round; the TTL is 10 minutes.
ROUNDS = [(0, "ab"), (5, "ac"), (12, "abc"), (14, "cd"), (16, "ac")]
QUERIES = {
    "dropDuplicates": (lambda s: s.dropDuplicates(["key"]).select("key"), "append"),
    "aggregation": (lambda s: s.groupBy("key").count(), "update"),
}


def main(workdir: Path, first: int, count: int) -> None:
    spark = ttlstore.configure(local_session_builder("ttlstore-upgrade"), ttl=timedelta(minutes=10)).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    rounds = ROUNDS[first:first + count]
    outputs = {}
    for name, (build, mode) in QUERIES.items():
        run = run_rounds(spark, TTL_PROVIDER, workdir / name, EVENTS, build,
                         [[{"key": k, "t": 0} for k in keys] for _, keys in rounds], mode,
                         round_conf=lambda i, rounds=rounds: {CLOCK_KEY: str(T0 + rounds[i][0] * MINUTE)},
                         first_round=first)
        outputs[name] = [sorted([list(r) for r in out]) for out in run.outputs]
    print("RESULT " + json.dumps({"spark": spark.version, "outputs": outputs}), flush=True)
    spark.stop()


if __name__ == "__main__":
    main(Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]))
