"""The wheel as a user gets it: installed into a fresh venv next to pyspark alone, it runs a query."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from conftest import ROOT

QUERY = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    from pyspark.sql import SparkSession
    import ttlstore

    work = Path(sys.argv[1])
    (work / "in").mkdir()
    (work / "in" / "0.json").write_text("".join(json.dumps({"key": k}) + "\\n" for k in "abca"))
    spark = ttlstore.configure(SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
                               .config("spark.sql.shuffle.partitions", "1"), ttl="1 hour").getOrCreate()
    seen = []
    query = (spark.readStream.schema("key string").json(str(work / "in")).dropDuplicates(["key"]).writeStream
             .foreachBatch(lambda df, _: seen.extend(r.key for r in df.collect()))
             .option("checkpointLocation", str(work / "checkpoint")).trigger(availableNow=True).start())
    query.awaitTermination()
    metrics = query.lastProgress["stateOperators"][0]["customMetrics"]
    print("RESULT", json.dumps({"keys": sorted(seen), "ttlstore": "ttlstoreCommitLatencyMs" in metrics,
                                "jar": ttlstore.jar_path()}))
    spark.stop()
""")


def test_the_wheel_installed_beside_pyspark_alone_runs_a_query_on_ttlstore(tmp_path: Path):
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                            "-w", str(tmp_path / "dist"), str(ROOT / "python")], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    (wheel,) = (tmp_path / "dist").glob("ttlstore-*.whl")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    installed = subprocess.run([str(python), "-m", "pip", "install", "--quiet", "pyspark==4.3.0", str(wheel)],
                               capture_output=True, text=True, timeout=900)
    assert installed.returncode == 0, installed.stderr
    script = tmp_path / "query.py"
    script.write_text(QUERY)
    (tmp_path / "work").mkdir()
    # Nothing of the checkout or of the test venv reaches the query: a new HOME, a bare PATH.
    env = {"PATH": "/usr/bin:/bin", "PYSPARK_PYTHON": str(python), "HOME": str(tmp_path)}
    if "JAVA_HOME" in os.environ:
        env["JAVA_HOME"] = os.environ["JAVA_HOME"]
    ran = subprocess.run([str(python), str(script), str(tmp_path / "work")], capture_output=True, text=True,
                         timeout=600, env=env, cwd=tmp_path)
    results = [x.removeprefix("RESULT ") for x in ran.stdout.splitlines() if x.startswith("RESULT ")]
    assert len(results) == 1, ran.stdout + ran.stderr[-3000:]
    result = json.loads(results[0])
    assert result["keys"] == ["a", "b", "c"] and result["ttlstore"]
    assert result["jar"].startswith(str(venv)), "the jar comes from the installed wheel, not the checkout"
