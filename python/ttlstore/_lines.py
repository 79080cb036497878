"""The Spark lines ttlstore is built for, and which bundled jar fits a pyspark.

ttlstore ships one jar per Spark line and Scala version (``ttlstore-spark-4.3_2.13-<version>.jar``,
Maven artifact ``io.ttlstore:ttlstore-spark-4.3_2.13``; ``ttlstore-spark-3.5_2.12`` for Spark 3.5, whose
pyspark ships Scala 2.12): Spark's state store API changes between lines, and Scala 2.12 and 2.13 are
binary incompatible, so each jar is compiled against its own line and Scala. The package bundles them all and picks the
one for the installed pyspark.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ttlstore._version import __version__
from ttlstore.errors import TtlStoreError

#: The jars the package bundles: (Spark line, Scala binary version), oldest first, one per row of the
#: build's jvm/spark/lines.tsv (a test checks that they agree).
JARS: tuple[tuple[str, str], ...] = (("3.5", "2.12"), ("3.5", "2.13"), ("4.0", "2.13"), ("4.1", "2.13"), ("4.2", "2.13"), ("4.3", "2.13"))

#: The Spark lines ttlstore is built for, oldest first.
SPARK_LINES: tuple[str, ...] = tuple(dict.fromkeys(line for line, _ in JARS))

_SCALA_LIBRARY = re.compile(r"scala-library-(\d+\.\d+)\.\d+.*\.jar")


class UnsupportedSparkError(TtlStoreError):
    """The installed pyspark is of a Spark line ttlstore is not built for (``SPARK_LINE_MISMATCH``, as the
    JVM names a jar loaded into a Spark of another line)."""


def spark_line(version: str) -> str:
    """The line of a Spark version: its major and minor number.

    >>> spark_line("4.2.1"), spark_line("4.0.0.dev1")
    ('4.2', '4.0')
    """
    parts = re.split(r"[.\-+]", version)
    return ".".join(parts[:2])


def artifact(line: str, scala: str) -> str:
    """The Maven artifact of one line and Scala version.

    >>> artifact("4.3", "2.13")
    'ttlstore-spark-4.3_2.13'
    """
    return f"ttlstore-spark-{line}_{scala}"


def jar_name(line: str, scala: str) -> str:
    """The file name of one line's jar, as the build writes and the package bundles it."""
    return f"{artifact(line, scala)}-{__version__}.jar"


def coordinates(line: str, scala: str) -> str:
    """The Maven coordinates of one line's jar, for ``spark-submit --packages``."""
    return f"io.ttlstore:{artifact(line, scala)}:{__version__}"


def installed_spark() -> tuple[str, str]:
    """The installed pyspark's version and Scala binary version: that of the scala-library jar it ships
    (beside the package, or in ``SPARK_HOME``, where Spark's Python workers run pyspark from a zip);
    failing that, the one its line's releases ship (Scala 2.12 before Spark 4, 2.13 since)."""
    import pyspark

    homes = [Path(pyspark.__file__).resolve().parent]
    if os.environ.get("SPARK_HOME"):
        homes.append(Path(os.environ["SPARK_HOME"]))
    for home in homes:
        jars = (home / "jars").glob("scala-library-*.jar")
        scalas = {m.group(1) for j in jars if (m := _SCALA_LIBRARY.fullmatch(j.name))}
        if len(scalas) == 1:
            return pyspark.__version__, scalas.pop()
    return pyspark.__version__, "2.12" if pyspark.__version__.split(".")[0] < "4" else "2.13"


def installed_line() -> tuple[str, str]:
    """The line and Scala version of the installed pyspark.

    :raises UnsupportedSparkError: if ttlstore is not built for that line.
    """
    version, scala = installed_spark()
    line = spark_line(version)
    if (line, scala) not in JARS:
        built = ", ".join(f"{built_line} with Scala {built_scala}" for built_line, built_scala in JARS)
        raise UnsupportedSparkError(
            f"[SPARK_LINE_MISMATCH] ttlstore {__version__} is built for Spark {built}, but the installed pyspark is {version} with Scala "
            f"{scala}: install a pyspark of one of those lines (pip install 'pyspark=={SPARK_LINES[-1]}.*')."
        )
    return line, scala
