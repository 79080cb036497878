"""ttlstore as a user gets it: the wheel installed into a fresh venv next to pyspark alone (the oldest
release of every Spark line), and the Maven artifact of the installed pyspark's line by its
coordinates, each runs a deduplication with TTL that forgets."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import ttlstore

from conftest import PYSPARK_SHIPS_RUNNING_SCALA, ROOT, RUNNING_LINE, RUNNING_SCALA, SPARK_LINES, SUITE_JVM

QUERY = textwrap.dedent("""
    import json, sys, time
    from pathlib import Path
    from pyspark.sql import SparkSession
    import ttlstore

    work = Path(sys.argv[1])
    (work / "in").mkdir()
    builder = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", "1"))
    if len(sys.argv) > 2:  # by Maven coordinates, from the repository sys.argv[2]
        builder = builder.config("spark.jars.repositories", sys.argv[2]).config("spark.jars.ivy", str(work / "ivy"))
        spark = ttlstore.configure(builder, jar=ttlstore.maven_coordinates(), ttl="3 seconds").getOrCreate()
    else:
        spark = ttlstore.configure(builder, ttl="3 seconds").getOrCreate()
    rounds = []
    for i, keys in enumerate(["abca", "bd"]):  # the second round comes after b expired
        if i:
            time.sleep(4)
        (work / "in" / f"{i}.json").write_text("".join(json.dumps({"key": k}) + "\\n" for k in keys))
        seen = []
        query = (spark.readStream.schema("key string").json(str(work / "in")).dropDuplicates(["key"]).writeStream
                 .foreachBatch(lambda df, _: seen.extend(r.key for r in df.collect()))
                 .option("checkpointLocation", str(work / "checkpoint")).trigger(availableNow=True).start())
        query.awaitTermination()
        rounds.append(sorted(seen))
    metrics = query.lastProgress["stateOperators"][0]["customMetrics"]
    jars = spark.sparkContext._jsc.sc().listJars()
    print("RESULT", json.dumps({"rounds": rounds, "ttlstore": "ttlstoreCommitLatencyMs" in metrics,
                                "version": spark.version,
                                "jar": ttlstore.jar_path(), "jars": [jars.apply(i) for i in range(jars.size())],
                                "spark.jars": spark.conf.get("spark.jars", "")}))
    spark.stop()
""")


def run_query(python: Path | str, tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> dict:
    """Runs QUERY with `python` in a process of its own; returns what it printed."""
    script = tmp_path / "query.py"
    script.write_text(QUERY)
    (tmp_path / "work").mkdir()
    ran = subprocess.run([str(python), str(script), str(tmp_path / "work"), *args], capture_output=True, text=True,
                         timeout=600, env=env, cwd=tmp_path)
    results = [x.removeprefix("RESULT ") for x in ran.stdout.splitlines() if x.startswith("RESULT ")]
    assert len(results) == 1, ran.stdout + ran.stderr[-3000:]
    result = json.loads(results[0])
    # b was forgotten after its TTL, and d is new; a and c were not in the second round.
    assert result["rounds"] == [["a", "b", "c"], ["b", "d"]] and result["ttlstore"], result
    return result


@pytest.mark.every_line
@pytest.mark.skipif(not PYSPARK_SHIPS_RUNNING_SCALA, reason="no pyspark release ships this line with this Scala: "
                    "there is nothing to install the wheel beside (the line's pyspark run takes this test)")
def test_the_wheel_installed_beside_pyspark_alone_runs_a_query_on_ttlstore_that_forgets(tmp_path: Path):
    """A new user's first run on the oldest patch release of the line under test (each line's run
    takes its own): the wheel picks that line's jar."""
    pyspark = next(line.oldest for line in SPARK_LINES if line.line == RUNNING_LINE)
    # Built from a copy: the other lines' runs build theirs at the same time, and setuptools writes
    # into the source tree.
    source = shutil.copytree(ROOT / "python", tmp_path / "source",
                             ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                            "-w", str(tmp_path / "dist"), str(source)], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    (wheel,) = (tmp_path / "dist").glob("ttlstore-*.whl")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    installed = subprocess.run([str(python), "-m", "pip", "install", "--quiet", f"pyspark=={pyspark}", str(wheel)],
                               capture_output=True, text=True, timeout=900)
    assert installed.returncode == 0, installed.stderr
    # Nothing of the checkout or of the test venv reaches the query: a new HOME, a bare PATH (and the suite's
    # JIT and collector, which change no behaviour).
    env = {"PATH": "/usr/bin:/bin", "PYSPARK_PYTHON": str(python), "HOME": str(tmp_path),
           "JDK_JAVA_OPTIONS": SUITE_JVM}
    if "JAVA_HOME" in os.environ:
        env["JAVA_HOME"] = os.environ["JAVA_HOME"]
    result = run_query(python, tmp_path, env=env)
    assert result["version"] == pyspark
    assert result["jar"].startswith(str(venv)), "the jar comes from the installed wheel, not the checkout"
    assert Path(result["jar"]).name == f"ttlstore-spark-{ttlstore.spark_line(pyspark)}_{RUNNING_SCALA}-{ttlstore.__version__}.jar"


MAVEN_REPO = ROOT / "jvm" / "target" / "maven-repo"


@pytest.mark.every_line
def test_the_maven_artifact_by_its_coordinates_runs_a_query_without_the_wheels_jar(tmp_path: Path):
    """`--packages io.ttlstore:ttlstore-spark-<line>_<scala>:<version>` from the Maven repository `make
    publish-local` writes: Spark resolves the installed pyspark's line's artifact alone (its pom names
    that line's Spark, rocksdbjni and Scala `provided`)."""
    import pyspark

    name = f"ttlstore-spark-{ttlstore.spark_line(pyspark.__version__)}_{RUNNING_SCALA}"
    pom = MAVEN_REPO / "io" / "ttlstore" / name / ttlstore.__version__ / f"{name}-{ttlstore.__version__}.pom"
    assert pom.is_file(), f"{pom} is missing: run `make publish-local` (make test does)"
    provided = re.findall(r"<artifactId>([^<]+)</artifactId>\s*<version>([^<]+)</version>\s*<scope>provided</scope>",
                          pom.read_text())
    assert {a for a, _ in provided} == {"scala-library", f"spark-sql_{RUNNING_SCALA}", "rocksdbjni"}
    assert dict(provided)[f"spark-sql_{RUNNING_SCALA}"] == pyspark.__version__, "the pom names the Spark it was built against"
    (scala,) = (Path(pyspark.__file__).parent / "jars").glob("scala-library-*.jar")
    assert scala.name == f"scala-library-{dict(provided)['scala-library']}.jar", "and the Scala that Spark ships"
    result = run_query(sys.executable, tmp_path, MAVEN_REPO.as_uri())
    # The one jar Spark added is the artifact from the Ivy cache: not the wheel's, and nothing else.
    artifact = f"io.ttlstore_{name}-{ttlstore.__version__}.jar"
    assert len(result["jars"]) == 1 and result["jars"][0].endswith(artifact), result["jars"]
    (added,) = result["spark.jars"].split(",")
    assert added.endswith(artifact) and str(tmp_path / "work" / "ivy") in added, added
