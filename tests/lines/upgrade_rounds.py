"""Runs some rounds of the cross-line upgrade scenario with the pyspark of the interpreter that runs it.

``python upgrade_rounds.py WORKDIR FIRST COUNT [PROVIDER]`` runs rounds FIRST to FIRST+COUNT-1 of a
TTL'd deduplication and a TTL'd aggregation on ttlstore (or on Spark's ``hdfs`` or ``rocksdb``
provider), each on its checkpoint under WORKDIR (continuing what earlier rounds left there, whichever
Spark line ran them), and prints one line ``RESULT {json}``: the Spark version and each query's output
per round. ``python upgrade_rounds.py WORKDIR migrate`` moves both checkpoints to ttlstore
(``ttlstore migrate``) with this line's jars. tests/test_line_upgrade.py runs it with each line's
interpreter in turn.
"""

from __future__ import annotations

import json
import sys
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import hooks  # noqa: E402
from pyspark.sql.types import LongType, StringType, StructField, StructType  # noqa: E402

import ttlstore  # noqa: E402

from conftest import HDFS_PROVIDER, ROCKSDB_PROVIDER, TTL_PROVIDER, local_session_builder, run_rounds  # noqa: E402

EVENTS = StructType([StructField("key", StringType()), StructField("t", LongType())])
T0 = 1_763_800_000_000
MINUTE = 60_000
CLOCK_KEY = hooks.CLOCK_MS
#: (minutes after T0, keys) per round; the TTL is 10 minutes.
ROUNDS = [(0, "ab"), (5, "ac"), (12, "abc"), (14, "cd"), (16, "ac"), (23, "ab")]
PROVIDERS = {"ttlstore": TTL_PROVIDER, "hdfs": HDFS_PROVIDER, "rocksdb": ROCKSDB_PROVIDER}
QUERIES = {
    "dropDuplicates": (lambda s: s.dropDuplicates(["key"]).select("key"), "append"),
    "aggregation": (lambda s: s.groupBy("key").count(), "update"),
}


def migrate(workdir: Path) -> None:
    reports = {name: ttlstore.migrate(workdir / name / "checkpoint").action for name in QUERIES}
    import pyspark

    print("RESULT " + json.dumps({"spark": pyspark.__version__, "migrated": reports}), flush=True)


def main(workdir: Path, first: int, count: int, provider: str) -> None:
    # On Spark's own providers the session sets no ttlstore setting (ttlstore's query check would
    # refuse a checkpoint that pins another provider in a session that asks for ttlstore's TTL).
    ours = provider == "ttlstore"
    ttl = {"ttl": timedelta(minutes=10)} if ours else {}
    spark = ttlstore.configure(local_session_builder("ttlstore-upgrade"), **ttl).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    rounds = ROUNDS[first:first + count]
    outputs = {}
    for name, (build, mode) in QUERIES.items():
        run = run_rounds(spark, PROVIDERS[provider], workdir / name, EVENTS, build,
                         [[{"key": k, "t": 0} for k in keys] for _, keys in rounds], mode,
                         round_conf=lambda i, rounds=rounds: {CLOCK_KEY: str(T0 + rounds[i][0] * MINUTE)} if ours else {},
                         first_round=first)
        outputs[name] = [sorted([list(r) for r in out]) for out in run.outputs]
    print("RESULT " + json.dumps({"spark": spark.version, "outputs": outputs}), flush=True)
    spark.stop()


if __name__ == "__main__":
    if sys.argv[2] == "migrate":
        migrate(Path(sys.argv[1]))
    else:
        main(Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] if len(sys.argv) > 4 else "ttlstore")
