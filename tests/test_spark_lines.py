"""One jar per Spark line: the lines table agrees everywhere, every line's jar is bundled, and a jar of
another line is refused by name instead of failing in a task. Runs on every line (make test-lines), which
tries each way of refusal once."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
import zipfile
from datetime import timedelta
from pathlib import Path

import pyspark
import pytest
from pyspark.sql import SparkSession
from pyspark.sql.utils import StreamingQueryException
from state_scenarios import dedup_with_ttl
from ttl_rounds import EVENTS, rows

import ttlstore
from ttlstore import _lines

from conftest import (
    HAS_STATE_READER,
    PYSPARK_SHIPS_RUNNING_SCALA,
    RUNNING_SCALA,
    SPARK_LINES,
    TTL_PROVIDER,
    SparkLine,
    core_params,
    run_rounds,
)

INSTALLED = ttlstore.spark_line(pyspark.__version__)
JARS = Path(ttlstore.__file__).resolve().parent / "jars"


@pytest.mark.every_line
def test_the_python_package_bundles_the_jars_of_the_lines_the_build_makes():
    assert _lines.JARS == tuple((line.line, line.scala) for line in SPARK_LINES)
    assert ttlstore.SPARK_LINES == tuple(dict.fromkeys(line.line for line in SPARK_LINES))
    for line in SPARK_LINES:
        jar = JARS / f"ttlstore-spark-{line.line}_{line.scala}-{ttlstore.__version__}.jar"
        with zipfile.ZipFile(jar) as z:
            built_for = dict(row.split("=", 1) for row in z.read("io/ttlstore/build.properties").decode().split())
        assert built_for["spark.line"] == line.line and built_for["spark.compiledAgainst"] == line.latest
        assert built_for["artifact"] == f"ttlstore-spark-{line.line}_{line.scala}"


@pytest.mark.every_line
def test_the_installed_pyspark_picks_its_line_and_an_unknown_line_is_refused_by_name(monkeypatch):
    assert ttlstore.jar_path().endswith(f"ttlstore-spark-{INSTALLED}_{RUNNING_SCALA}-{ttlstore.__version__}.jar")
    monkeypatch.setattr(_lines, "installed_spark", lambda: ("3.4.1", "2.12"))
    with pytest.raises(ttlstore.TtlStoreError,
                       match=r"built for Spark 3\.5 with Scala 2\.12, 3\.5 with Scala 2\.13, 4\.0 with Scala 2\.13, .*"
                             r"installed pyspark is 3\.4\.1") as refused:
        ttlstore.jar_path()
    assert isinstance(refused.value, ttlstore.UnsupportedSparkError)
    assert refused.value.getCondition() == "SPARK_LINE_MISMATCH" and refused.value.getSqlState() == "0A000"
    monkeypatch.setattr(_lines, "installed_spark", lambda: ("4.3.0", "2.12"))
    with pytest.raises(ttlstore.UnsupportedSparkError, match=r"installed pyspark is 4\.3\.0 with Scala 2\.12"):
        ttlstore.jar_path()


#: How long a session's script may run before the test calls it hung: make test runs the other lines' suites at the
#: lowest priority beside the development line's, where a script of some 20 s of work waited over 300 s for the
#: processors on CI.
HANG_GUARD_S = 900

REFUSED = textwrap.dedent("""
    import sys, tempfile
    from pyspark.sql import SparkSession
    import ttlstore

    jar, how = sys.argv[1], sys.argv[2]
    builder = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", "2"))
    if how == "extension":
        builder = ttlstore.configure(builder, jar=jar)
    elif how == "provider":  # the provider alone, as a spark-submit user may set it
        builder = builder.config("spark.jars", jar).config(ttlstore.settings.PROVIDER_CLASS_KEY,
                                                           ttlstore.settings.PROVIDER_CLASS)
    else:  # the jar on the classpath of a session that does not use ttlstore
        builder = builder.config("spark.jars", jar)
    try:
        spark = builder.getOrCreate()
        source = tempfile.mkdtemp()
        with open(f"{source}/0.json", "w") as f:
            f.write('{"value": 1}\\n{"value": 1}\\n')
        query = (spark.readStream.schema("value long").json(source).dropDuplicates(["value"]).writeStream
                 .format("noop").option("checkpointLocation", tempfile.mkdtemp()).trigger(availableNow=True).start())
        query.awaitTermination()
        print("RAN")
    except Exception as e:  # the JVM's whole chain: PySpark shows only the outer error's message
        print("FAILED", str(e).replace("\\\\n", " "))
""")


def _other_jars() -> list[tuple[str, SparkLine]]:
    """A jar of another line on the installed pyspark's Scala, and one of another Scala, where built."""
    same = [line for line in SPARK_LINES if line.line != INSTALLED and line.scala == RUNNING_SCALA]
    other = [line for line in SPARK_LINES if line.scala != RUNNING_SCALA]
    return [(name, found[0]) for name, found in (("same Scala", same), ("other Scala", other)) if found]


#: The other lines' core: each way of asking for ttlstore once and each jar once (the development line runs
#: every pairing; where there is one jar, every line does).
LINE_CORE = ["extension-same Scala", "provider only-other Scala"]


def _pairings() -> list:
    """Each way of asking for ttlstore with each jar of another line."""
    jars = _other_jars()
    pairs = {f"{how}-{kind}": (how, line) for how in ("extension", "provider only") for kind, line in jars}
    return core_params(pairs, list(pairs) if len(jars) == 1 else LINE_CORE)


@pytest.mark.parametrize("pairing", _pairings())
def test_a_jar_of_another_line_fails_at_start_naming_both_lines_and_the_artifact_to_use(tmp_path: Path, pairing):
    """Every pairing: a jar of another line of the same Scala, or of another Scala (Spark 3.5's jar, built
    for Scala 2.12, in a 4.x Spark, and a 4.x jar in 3.5), with ttlstore's extension (refused as the
    session starts) or with the provider alone (refused at the query's first data source lookup, before
    Spark loads the provider, which a Spark of another line may not even load)."""
    how, other = pairing
    jar = JARS / f"ttlstore-spark-{other.line}_{other.scala}-{ttlstore.__version__}.jar"
    script = tmp_path / "refused.py"
    script.write_text(REFUSED)
    ran = subprocess.run([sys.executable, str(script), str(jar), how.split()[0]], capture_output=True, text=True,
                         timeout=HANG_GUARD_S, cwd=tmp_path)
    out = ran.stdout + ran.stderr
    assert "RAN" not in ran.stdout.split()
    mismatch = re.search(r"\[SPARK_LINE_MISMATCH\][^\n]*", out)
    assert mismatch, out[-3000:]
    assert (f"built for Spark {other.line} with Scala {other.scala}, but runs in Spark {pyspark.__version__} "
            f"with Scala {RUNNING_SCALA}") in mismatch.group(0)
    assert f"io.ttlstore:ttlstore-spark-{INSTALLED}_{RUNNING_SCALA}:{ttlstore.__version__}" in mismatch.group(0)
    assert "NoSuchMethodError" not in out and "NoClassDefFoundError" not in out


@pytest.mark.every_line
def test_a_jar_of_another_scala_leaves_a_session_that_does_not_use_ttlstore_working(tmp_path: Path):
    """On the classpath of a session that asks for neither ttlstore's provider nor its extension, a jar
    of another Scala (whose Scala classes cannot load there) keeps the session's data source lookups
    and stateful queries working."""
    other = next(line for line in SPARK_LINES if line.scala != RUNNING_SCALA)
    jar = JARS / f"ttlstore-spark-{other.line}_{other.scala}-{ttlstore.__version__}.jar"
    script = tmp_path / "refused.py"
    script.write_text(REFUSED)
    ran = subprocess.run([sys.executable, str(script), str(jar), "absent"], capture_output=True, text=True,
                         timeout=HANG_GUARD_S, cwd=tmp_path)
    assert "RAN" in ran.stdout.split(), (ran.stdout + ran.stderr)[-3000:]


@pytest.mark.every_line
@pytest.mark.skipif(HAS_STATE_READER or not PYSPARK_SHIPS_RUNNING_SCALA,
                    reason="only Spark 3.5, of the lines ttlstore serves, lacks these (its pyspark's run checks them)")
def test_what_spark_3_5_lacks_is_refused_by_name_and_inspect_shows_the_state(spark: SparkSession, tmp_path: Path):
    """Spark 3.5 has no state data source, no checkpoint format v2 and no operator metadata (4.0 brought
    all three): ``read_state``, a query asking for format v2 and ``ttlstore repartition`` fail naming
    what is missing, where Spark 3.5 alone would fail without a reason or silently run in format 1.
    ``ttlstore inspect``, which the refusal of ``read_state`` points to, counts the rows and the
    expired rows still stored."""
    dedup = dedup_with_ttl(spark, tmp_path / "dedup", timedelta(minutes=10))
    assert [len(batch) for batch in dedup.outputs] == [1, 1, 1], "the query itself runs"
    with pytest.raises(Exception, match=r"STATE_READER_NOT_IN_SPARK.*Spark 3\.5.*ttlstore inspect"):
        ttlstore.read_state(spark, dedup.checkpoint).collect()
    # At 12 min "a" (written at 0) has expired and is still stored; "b" and "c" live.
    for report in (ttlstore.inspect_checkpoint(spark, dedup.checkpoint),
                   ttlstore.inspect_checkpoint_offline(dedup.checkpoint)):
        [store] = report["operators"][0]["stores"]
        assert (store["rows"], store["expiredRowsStored"], [t["ttlMs"] for t in store["ttl"]]) == (2, 1, [600_000])
    with pytest.raises(ttlstore.RepartitionError, match=r"OPERATOR_METADATA_MISSING.*Spark 3\.5 writes none"):
        ttlstore.repartition(dedup.checkpoint, 3)
    with pytest.raises(StreamingQueryException, match=r"CHECKPOINT_FORMAT_V2_NOT_IN_SPARK.*checkpointFormatVersion=2"):
        run_rounds(spark, TTL_PROVIDER, tmp_path / "v2", EVENTS, lambda s: s.dropDuplicates(["key"]), [rows("a")],
                   "append", extra_conf={"spark.sql.streaming.stateStore.checkpointFormatVersion": "2"})
    assert not (tmp_path / "v2" / "checkpoint" / "commits" / "0").exists(), "nothing was committed"
