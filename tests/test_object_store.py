"""Checkpoints on an S3-compatible object store, reached through s3a://.

The store is moto's S3 server (``moto[server]`` from PyPI, in the test extras), started by the
module in this process: it speaks S3's REST API (multipart uploads, copy, list v2) and needs no
download beyond PyPI, where MinIO and LocalStack are not (LocalStack needs Docker). Spark reaches it
with hadoop-aws of pyspark's Hadoop version and the AWS SDK v2 modules S3A uses, fetched by
`make test` into .build/s3a (tests/s3a/pom.xml); they go on the test sessions' `spark.jars`, never
into ttlstore's jar.

An object store has no atomic rename. ttlstore writes there through Spark's CheckpointFileManager,
as Spark's own providers do: every file is written under a temporary name and then renamed, which
S3A does by copying; an object becomes visible only once its upload completes. A writer killed
halfway leaves at most a temporary object, which no load reads.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterator
from pathlib import Path

import boto3
import pytest
from chaos import crash_loop, crash_queries
from crash_scenario import FILES, KEYS, ROWS, SEED, assert_computes_the_reference
from moto.server import ThreadedMotoServer

from ttlstore.cli import main

from conftest import ROOT, RUNNING_LINE, SPARK_LINES

# hadoop-aws of the installed pyspark's Hadoop: the development line's, or another line's (make test-matrix).
S3A_JARS = ROOT / ".build" / ("s3a" if RUNNING_LINE == SPARK_LINES[-1].line else f"spark-{RUNNING_LINE}/s3a")
BUCKET = "checkpoints"
TEMPORARY = re.compile(r"/\.[^/]+\.tmp$")


@pytest.fixture(scope="module")
def s3() -> Iterator[dict[str, str]]:
    """The Hadoop settings that reach a running S3 server (moto) with bucket BUCKET."""
    assert (S3A_JARS / ".fetched").is_file(), f"{S3A_JARS} is missing: `make test` fetches it"
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    settings = {"fs.s3a.endpoint": f"http://{host}:{port}", "fs.s3a.path.style.access": "true",
                "fs.s3a.access.key": "test", "fs.s3a.secret.key": "test", "fs.s3a.endpoint.region": "us-east-1",
                "fs.s3a.connection.ssl.enabled": "false"}
    client(settings).create_bucket(Bucket=BUCKET)
    yield settings
    server.stop()


def client(settings: dict[str, str]):  # type: ignore[no-untyped-def]
    return boto3.client("s3", endpoint_url=settings["fs.s3a.endpoint"], aws_access_key_id="test",
                        aws_secret_access_key="test", region_name="us-east-1")


def keys_below(settings: dict[str, str], prefix: str) -> list[str]:
    pages = client(settings).get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix)
    return [o["Key"] for page in pages for o in page.get("Contents", [])]


def test_a_driver_killed_while_uploading_to_s3_and_restarted_computes_what_spark_hdfs_provider_does(
    tmp_path: Path, s3: dict[str, str], hdfs_reference: dict[str, list[str]], capsys: pytest.CaptureFixture[str]
):
    variant = dataclasses.replace(crash_loop.VARIANTS["TTL off"], query_set="pair")
    reference = {query: hdfs_reference[query] for query in crash_queries.QUERY_SETS["pair"]}
    work = tmp_path / "killed"
    crash_queries.write_input(work / "input", SEED, FILES, ROWS, KEYS)
    jars = sorted(str(j) for j in S3A_JARS.glob("*.jar"))
    # A snapshot at every version: the kill lands among snapshot and changelog uploads (`make chaos` kills more).
    confs = [*variant.confs, f"spark.jars={','.join(jars)}", "spark.sql.streaming.stateStore.minDeltasForSnapshot=1",
             *(f"spark.hadoop.{k}={v}" for k, v in s3.items())]

    kills = crash_loop.run(work, crash_loop.TTL_PROVIDER, confs, kills=1, seed=SEED, query_set=variant.query_set,
                           checkpoints=f"s3a://{BUCKET}/killed")

    assert kills["kills"] == 1, kills
    got = assert_computes_the_reference(work, variant, reference, kills)
    stored = keys_below(s3, "killed/")
    for kind in (".changelog", ".snapshot", ".sst"):
        assert any("/ttlstore/" in k and k.endswith(kind) for k in stored), f"no ttlstore {kind} on S3: {stored[:20]}"
    left = [k for k in stored if TEMPORARY.search(k)]
    print(f"temporary objects the kills left: {len(left)} {left[:5]}")

    # Every store's latest version loads from what is on S3, read where it is by `ttlstore inspect`.
    conf = [a for k, v in s3.items() for a in ("--conf", f"spark.hadoop.{k}={v}")]
    capsys.readouterr()
    assert main(["inspect", f"s3a://{BUCKET}/killed/dropDuplicates", "--json", "--jars", str(S3A_JARS), *conf]) == 0
    [store] = json.loads(capsys.readouterr().out)["operators"][0]["stores"]
    assert store["files"] == ["ttlstore"] and store["scanned"]
    assert store["rows"] == len(got["dropDuplicates"]) + 1, store
