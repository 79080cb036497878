"""A Spark Connect client of a server started with ttlstore (tests/test_connect.py): a dropDuplicates with
TTL, its progress, its state read back and the checkpoint inspected, and a setting's error caught by its
condition. Prints what it saw as ``RESULT {json}``.

    python client.py sc://localhost:PORT WORKDIR
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from pyspark.sql import SparkSession

import ttlstore


def main(url: str, work: Path) -> dict:
    spark = ttlstore.configure(SparkSession.builder.remote(url), max_memory_usage_mb=256).getOrCreate()
    result: dict = {"connect": ttlstore._connect.is_connect_session(spark)}
    ttlstore.apply_ttl(spark, ttlstore.StateTtlConfig("1 hour"))

    source = work / "input"
    source.mkdir(parents=True)
    (source / "round-0.json").write_text("".join(json.dumps({"key": f"k{i % 7}", "v": i}) + "\n" for i in range(20)))
    checkpoint = work / "checkpoint"
    query = (spark.readStream.schema("key string, v long").json(str(source)).dropDuplicates(["key"])
             .writeStream.format("memory").queryName("dedup").option("checkpointLocation", str(checkpoint))
             .trigger(availableNow=True).start())
    query.awaitTermination()
    operator = query.lastProgress["stateOperators"][0]
    result["numRowsTotal"] = operator["numRowsTotal"]
    result["metrics"] = sorted(k for k in operator["customMetrics"] if k.startswith("ttlstore"))
    result["output"] = spark.sql("SELECT count(*) FROM dedup").collect()[0][0]

    state = ttlstore.read_state(spark, str(checkpoint)).collect()
    result["state"] = {"rows": len(state), "expiring": all(r.expires_at is not None and not r.expired for r in state)}
    report = ttlstore.inspect_checkpoint(spark, str(checkpoint))
    store = report["operators"][0]["stores"][0]
    result["inspect"] = {"provider": report["provider"], "rows": store["rows"], "ttlMs": store["ttl"][0]["ttlMs"]}

    # A setting ttlstore refuses: the failure carries ttlstore's condition through Spark Connect.
    spark.conf.set(ttlstore.settings.PREFIX + "ttl", "soon")
    try:
        failing = (spark.readStream.schema("key string, v long").json(str(source)).dropDuplicates(["key"])
                   .writeStream.format("memory").queryName("refused")
                   .option("checkpointLocation", str(work / "refused")).trigger(availableNow=True).start())
        failing.awaitTermination()
        result["refused"] = None
    except Exception as e:  # PySpark's own exception class, whichever Connect raises
        result["refused"] = {"condition": ttlstore.condition_of(e), "type": type(e).__name__,
                             "sparkCondition": e.getCondition() if hasattr(e, "getCondition") else None}
    spark.stop()
    return result


if __name__ == "__main__":
    print("RESULT " + json.dumps(main(sys.argv[1], Path(sys.argv[2]))))
