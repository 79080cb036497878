"""A class data sharing archive of Spark's classes for the suite's JVMs, one per pyspark and JDK.

Starting a Spark JVM and running its first query mostly loads and verifies Spark's classes: about 9 s of
CPU for a session that deduplicates two rows, 5 s with Spark's classes mapped from an archive the JDK
wrote at an earlier JVM's exit (`-XX:ArchiveClassesAtExit`, JDK 13+). The suite starts many such JVMs
(sessions, scripts, restarted and killed drivers, local-cluster executors) on two cores, six Spark lines
side by side, so the archive is written once per pyspark into .build/cds and every JVM the suite
starts is given it (`JDK_JAVA_OPTIONS`, beside conftest's C1-only JIT).

Nothing of what a test asserts changes: the JDK maps the same class files' bytes and checks the
archive against the JVM and the class path it was written with. A JVM whose class path differs (the
launcher's, one with extra jars, another line's, Maven's) or a stale archive simply runs without it;
the JDK's notes about that are silenced, so that no test sees them in its output. A class of a jar
that is not on the class path (ttlstore's own, through `--jars`) is used from the archive only where
its bytes are the same. Where the archive cannot be written, the suite runs without it.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ARCHIVES = ROOT / ".build" / "cds"
#: The JDK's messages about an archive it cannot use (another class path, another JVM) stay out of every
#: JVM's output.
QUIET = "-Xlog:cds*=off -Xlog:class+path*=off"

#: The session that writes the archive: a stateful query on ttlstore, so that what most tests load
#: (streaming, state stores, file sources, aggregation, codegen) is in it.
WRITER = """
import os, sys, tempfile
import ttlstore
from pyspark.sql import SparkSession
options = f"-XX:ArchiveClassesAtExit={sys.argv[1]} -Dlog4j2.configurationFile={sys.argv[2]}"
builder = (SparkSession.builder.master("local[2]").appName("class-archive").config("spark.ui.enabled", "false")
           .config("spark.sql.shuffle.partitions", "2").config("spark.driver.extraJavaOptions", options))
spark = ttlstore.configure(builder).getOrCreate()
spark.sparkContext.setLogLevel("ERROR")
root = tempfile.mkdtemp()
source = os.path.join(root, "in")
os.makedirs(source)
with open(os.path.join(source, "0.json"), "w") as f:
    f.write('{"key": 1}\\n{"key": 2}\\n{"key": 1}\\n')
events = spark.readStream.schema("key long").json(source)
for name, df, mode in (("dedup", events.dropDuplicates(["key"]), "append"),
                       ("count", events.groupBy("key").count(), "update")):
    query = (df.writeStream.format("memory").queryName(name).outputMode(mode)
             .option("checkpointLocation", os.path.join(root, name)).trigger(availableNow=True).start())
    query.awaitTermination()
    spark.table(name).collect()
spark.stop()
"""


def _java() -> Path | None:
    """The java Spark's launcher runs: JAVA_HOME's, else the first on the PATH."""
    home = os.environ.get("JAVA_HOME")
    found = Path(home) / "bin" / "java" if home else (Path(p) if (p := shutil.which("java")) else None)
    return found.resolve() if found and found.exists() else None


def archive_for(pyspark_dir: Path, java: Path) -> Path:
    """Where the archive of this pyspark on this JDK lives: named by both (the jars' directory as installed),
    so that neither a pyspark installed anew nor another JDK ever meets an archive of another."""
    jars, binary = (pyspark_dir / "jars").resolve(), java.stat()
    key = f"{jars}|{jars.stat().st_mtime_ns}|{java}|{binary.st_size}|{binary.st_mtime_ns}"
    return ARCHIVES / f"{pyspark_dir.name}-{hashlib.sha256(key.encode()).hexdigest()[:16]}.jsa"


def _write(archive: Path) -> bool:
    """Writes `archive` from a session's exit (into a temporary file, renamed once whole); True if it did."""
    archive.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=archive.parent) as work:
        partial = Path(work) / archive.name
        script = Path(work) / "write_archive.py"
        script.write_text(WRITER)
        env = {k: v for k, v in os.environ.items() if k != "JDK_JAVA_OPTIONS"}
        env["JDK_JAVA_OPTIONS"] = QUIET
        try:
            subprocess.run([sys.executable, str(script), str(partial), str(ROOT / "conf" / "log4j2.properties")],
                           env=env, cwd=work, capture_output=True, timeout=600, check=True)
        except (subprocess.SubprocessError, OSError):
            return False
        if not partial.exists():
            return False
        os.replace(partial, archive)
    return True


def jvm_options() -> str:
    """The options that give a JVM this pyspark's archive, written first if there is none; empty where it
    cannot be written (the suite then runs without it)."""
    import pyspark

    java = _java()
    if java is None:
        return ""
    archive = archive_for(Path(pyspark.__file__).parent, java)
    if not archive.exists() and not _write(archive):
        return ""
    return f"-XX:SharedArchiveFile={archive} {QUIET}"
