"""The Spark lines ttlstore is built for, and which bundled jar fits a pyspark.

ttlstore ships one jar per Spark line and Scala version (``ttlstore-spark-4.3_2.13-<version>.jar``,
Maven artifact ``io.ttlstore:ttlstore-spark-4.3_2.13``): Spark's state store API changes between
lines, so each jar is compiled against its own line. The package bundles them all and picks the
one for the installed pyspark.
"""

from __future__ import annotations

import re
from pathlib import Path

from ttlstore._version import __version__

#: The jars the package bundles: (Spark line, Scala binary version), oldest first, one per row of the
#: build's jvm/spark/lines.tsv (a test checks that they agree).
JARS: tuple[tuple[str, str], ...] = (("4.0", "2.13"), ("4.1", "2.13"), ("4.2", "2.13"), ("4.3", "2.13"))

#: The Spark lines ttlstore is built for, oldest first.
SPARK_LINES: tuple[str, ...] = tuple(dict.fromkeys(line for line, _ in JARS))

_SCALA_LIBRARY = re.compile(r"scala-library-(\d+\.\d+)\.\d+.*\.jar")


class UnsupportedSparkError(RuntimeError):
    """The installed pyspark is of a Spark line ttlstore is not built for."""


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
    """The installed pyspark's version and Scala binary version (from the scala-library jar it ships)."""
    import pyspark

    jars = Path(pyspark.__file__).resolve().parent / "jars"
    scalas = {m.group(1) for j in jars.glob("scala-library-*.jar") if (m := _SCALA_LIBRARY.fullmatch(j.name))}
    scala = scalas.pop() if len(scalas) == 1 else "2.13"
    return pyspark.__version__, scala


def installed_line() -> tuple[str, str]:
    """The line and Scala version of the installed pyspark.

    :raises UnsupportedSparkError: if ttlstore is not built for that line.
    """
    version, scala = installed_spark()
    line = spark_line(version)
    if line not in SPARK_LINES:
        raise UnsupportedSparkError(
            f"ttlstore {__version__} is built for Spark {', '.join(SPARK_LINES)}, but the installed pyspark is "
            f"{version}: install a pyspark of one of those lines (pip install 'pyspark=={SPARK_LINES[-1]}.*')."
        )
    return line, scala
