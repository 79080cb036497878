"""A store that only reads gets its L0 files merged, as Spark schedules a steady deduplication with default settings.

Every read of a stored key checks the filter of each L0 file first, and a store that writes nothing keeps the
fill's last L0 files for ever; after a few commits that wrote nothing ttlstore lowers the store's L0 compaction
trigger, so RocksDB's own threads merge L0 once (io.ttlstore.store.rocksdb.ReadTuning; `RocksDbLayoutSuite`
drives the store directly). Here a deduplication fills its stores across two snapshots (each snapshot's flush leaves
an L0 file), then reads only; RocksDB's OPTIONS file in each store's working copy shows the trigger it runs with, and
the working copy's SST files show L0 merged.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from processes import run_script

FILL_BATCHES = 12  # past the snapshot of version 10, so that the one of version 20 flushes a second L0 file
ROWS_PER_BATCH = 4_000  # 2 stores: 24,000 keys each, above ReadTuning.ReadMostlyMinRows (10,000)
BATCHES = 24

DRIVER = textwrap.dedent(
    """
    import json, re, sys, time
    from pathlib import Path
    from pyspark.sql import SparkSession, functions as F
    import ttlstore

    local, checkpoint, fill, rows, batches = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:6])
    spark = ttlstore.configure(
        SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2"),
        local_dir=local,
    ).getOrCreate()
    keys = fill * rows
    value = F.col("value")
    source = spark.readStream.format("rate-micro-batch").option("rowsPerBatch", rows).load()
    query = (source.select(F.when(value < keys, value).otherwise(value % keys).alias("key")).dropDuplicates(["key"])
             .writeStream.format("noop").option("checkpointLocation", checkpoint).start())
    while len([p for p in query.recentProgress if p["numInputRows"] > 0]) < batches:
        assert query.exception() is None, query.exception()
        time.sleep(0.2)

    def trigger(options: Path) -> str:
        family = options.read_text().split('[CFOptions "timestamped"]')[1].split("[")[0]
        return re.search(r"level0_file_num_compaction_trigger=(\\d+)", family).group(1)

    dbs = sorted({o.parent for o in Path(local).rglob("db/OPTIONS-*")})
    deadline = time.monotonic() + 60  # RocksDB's background threads merge L0 on their own time
    while any(len(list(db.glob("*.sst"))) > 1 for db in dbs) and time.monotonic() < deadline:
        time.sleep(0.2)
    found = {str(db): {"trigger": trigger(max(db.glob("OPTIONS-*"), key=lambda o: int(o.name.split("-")[1]))),
                       "ssts": len(list(db.glob("*.sst")))} for db in dbs}
    rows_total = query.lastProgress["stateOperators"][0]["numRowsTotal"]
    query.stop()
    spark.stop()
    print("RESULT " + json.dumps({"dbs": found, "rows": rows_total}), flush=True)
    """
)


def test_a_steady_deduplication_whose_stores_only_read_gets_their_l0_files_merged(tmp_path: Path):
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER)

    result = run_script(driver, [str(tmp_path / "local"), str(tmp_path / "checkpoint"), str(FILL_BATCHES),
                                 str(ROWS_PER_BATCH), str(BATCHES)], timeout=600)

    assert result["rows"] == FILL_BATCHES * ROWS_PER_BATCH
    assert len(result["dbs"]) == 2, result
    for db, found in result["dbs"].items():
        assert found["trigger"] == "1", f"{db}: the L0 trigger of a store that only reads is one file: {found}"
        assert found["ssts"] == 1, f"{db}: RocksDB merged the L0 files into one file of the base level: {found}"
