"""The ttlstore jar for the installed pyspark: the bundled file, or its Maven coordinates."""

from __future__ import annotations

from pathlib import Path

from ttlstore._lines import JARS, UnsupportedSparkError, coordinates, installed_line, jar_name


def jar_path() -> str:
    """Return the path of the bundled ttlstore jar for the installed pyspark: the package bundles one
    jar per Spark line and Scala version (:data:`ttlstore.SPARK_LINES`).

    :raises UnsupportedSparkError: if ttlstore is not built for the installed pyspark's line.
    :raises FileNotFoundError: if the package was installed without that jar (a source checkout
        where ``make`` has not run yet).

    >>> import ttlstore
    >>> ttlstore.jar_path().endswith(f"-{ttlstore.__version__}.jar")
    True
    """
    jar = Path(__file__).resolve().parent / "jars" / jar_name(*installed_line())
    if not jar.is_file():
        raise FileNotFoundError(
            f"The ttlstore jar for the installed pyspark is missing: {jar}. In a source checkout, run `make` to "
            "build it; otherwise reinstall the ttlstore package."
        )
    return str(jar)


def maven_coordinates() -> str:
    """Return the Maven coordinates of ttlstore for the installed pyspark's Spark line and Scala, for
    ``spark-submit --packages`` and ``configure(jar=...)``.

    :raises UnsupportedSparkError: if ttlstore is not built for the installed pyspark's line.

    >>> import pyspark, ttlstore
    >>> ttlstore.maven_coordinates().startswith(f"io.ttlstore:ttlstore-spark-{ttlstore.spark_line(pyspark.__version__)}_")
    True
    """
    return coordinates(*installed_line())


def _installed_or_newest() -> str:
    try:
        return maven_coordinates()
    except UnsupportedSparkError:
        return coordinates(*JARS[-1])


#: ttlstore's Maven coordinates for the installed pyspark (for an unsupported one, the newest line's).
MAVEN_COORDINATES = _installed_or_newest()
