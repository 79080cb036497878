"""The single source of ttlstore's version: build.sbt reads it for the jar, pyproject for the wheel."""

__version__ = "0.1.0"
