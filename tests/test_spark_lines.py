"""One jar per Spark line: the lines table agrees everywhere, every line's jar is bundled, and a jar of
another line is refused by name instead of failing in a task. Runs on every line (make test-lines)."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pyspark
import pytest

import ttlstore
from ttlstore import _lines

from conftest import SPARK_LINES

pytestmark = pytest.mark.every_line

INSTALLED = ttlstore.spark_line(pyspark.__version__)
JARS = Path(ttlstore.__file__).resolve().parent / "jars"


def test_the_python_package_bundles_the_jars_of_the_lines_the_build_makes():
    assert _lines.JARS == tuple((line.line, line.scala) for line in SPARK_LINES)
    assert ttlstore.SPARK_LINES == tuple(line.line for line in SPARK_LINES)
    for line in SPARK_LINES:
        jar = JARS / f"ttlstore-spark-{line.line}_{line.scala}-{ttlstore.__version__}.jar"
        with zipfile.ZipFile(jar) as z:
            built_for = dict(row.split("=", 1) for row in z.read("io/ttlstore/build.properties").decode().split())
        assert built_for["spark.line"] == line.line and built_for["spark.compiledAgainst"] == line.latest
        assert built_for["artifact"] == f"ttlstore-spark-{line.line}_{line.scala}"


def test_the_installed_pyspark_picks_its_line_and_an_unknown_line_is_refused_by_name(monkeypatch):
    assert ttlstore.jar_path().endswith(f"ttlstore-spark-{INSTALLED}_2.13-{ttlstore.__version__}.jar")
    monkeypatch.setattr(_lines, "installed_spark", lambda: ("3.4.1", "2.12"))
    with pytest.raises(ttlstore.UnsupportedSparkError, match=r"built for Spark 4\.0, .*installed pyspark is 3\.4\.1"):
        ttlstore.jar_path()


REFUSED = textwrap.dedent("""
    import sys, tempfile
    from pyspark.sql import SparkSession
    import ttlstore

    jar, with_extension = sys.argv[1], sys.argv[2] == "extension"
    builder = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
    if with_extension:
        builder = ttlstore.configure(builder, jar=jar)
    else:  # the provider alone, as a spark-submit user may set it
        builder = builder.config("spark.jars", jar).config(ttlstore.settings.PROVIDER_CLASS_KEY,
                                                           ttlstore.settings.PROVIDER_CLASS)
    try:
        spark = builder.getOrCreate()
        query = (spark.readStream.format("rate").load().dropDuplicates(["value"]).writeStream.format("noop")
                 .option("checkpointLocation", tempfile.mkdtemp()).start())
        query.processAllAvailable()
        print("RAN")
    except Exception as e:  # the JVM's whole chain: PySpark shows only the outer error's message
        print("FAILED", str(e).replace("\\\\n", " "))
""")


@pytest.mark.parametrize("how", ["extension", "provider only"])
def test_a_jar_of_another_line_fails_at_start_naming_both_lines_and_the_artifact_to_use(tmp_path: Path, how: str):
    other = next(line for line in SPARK_LINES if line.line != INSTALLED)
    jar = JARS / f"ttlstore-spark-{other.line}_2.13-{ttlstore.__version__}.jar"
    script = tmp_path / "refused.py"
    script.write_text(REFUSED)
    ran = subprocess.run([sys.executable, str(script), str(jar), how.split()[0]], capture_output=True, text=True,
                         timeout=300, cwd=tmp_path)
    out = ran.stdout + ran.stderr
    assert "RAN" not in ran.stdout.split()
    mismatch = re.search(r"\[SPARK_LINE_MISMATCH\][^\n]*", out)
    assert mismatch, out[-3000:]
    assert f"built for Spark {other.line} with Scala 2.13, but runs in Spark {pyspark.__version__}" in mismatch.group(0)
    assert f"io.ttlstore:ttlstore-spark-{INSTALLED}_2.13:{ttlstore.__version__}" in mismatch.group(0)
    assert "NoSuchMethodError" not in out and "NoClassDefFoundError" not in out
