# ttlstore's build. `make` builds the jar and installs the Python package (with pyspark and the
# test tools) into .venv; `make demo` and `make test` build first, so each works as the first
# command on a fresh machine. Everything is fetched by this file through each client's default
# repository: sbt's launcher and the build's dependencies from Maven Central, pyspark and the test
# tools from PyPI. No repository host is written here.

SHELL := /bin/bash
.DEFAULT_GOAL := all

PYTHON ?= python3
CC ?= cc
VENV := .venv
PY := $(VENV)/bin/python
VERSION := $(shell sed -n 's/^__version__ = "\(.*\)"/\1/p' python/ttlstore/_version.py)
JAR := jvm/target/ttlstore-$(VERSION).jar
# The Maven artifact io.ttlstore:ttlstore_2.13 in a Maven repository on disk (`make publish-local`).
MAVEN_REPO := jvm/target/maven-repo
POM := $(MAVEN_REPO)/io/ttlstore/ttlstore_2.13/$(VERSION)/ttlstore_2.13-$(VERSION).pom
SBT_VERSION := $(shell sed -n 's/^sbt.version=//p' project/build.properties)
SBT_LAUNCHER := .build/sbt-launch-$(SBT_VERSION).jar
# sbt from its launcher, resolving only from sbt's predefined `maven-central` (project/repositories).
SBT := java -Xmx2g -Xss4m -Dsbt.repository.config=project/repositories \
	-Dsbt.override.build.repos=true -Dsbt.server.forcestart=false -Dsbt.supershell=false \
	-Dsbt.color=false -Dsbt.log.noformat=true -Dsbt.ci=true -jar $(SBT_LAUNCHER)
# The jar carries the native filter for linux-x86_64 and linux-aarch64: the other architecture's is
# built with Debian's cross compiler, and its C tests run under Debian's qemu-user.
CROSS_ARCH := $(if $(filter aarch64 arm64,$(shell uname -m)),x86_64,aarch64)
CROSS_CC := $(CROSS_ARCH)-linux-gnu-gcc
CROSS_QEMU := qemu-$(CROSS_ARCH)
CROSS_PACKAGES := gcc-$(subst _,-,$(CROSS_ARCH))-linux-gnu qemu-user
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)
# Python workers must run the interpreter that has pyspark and ttlstore installed.
export PYSPARK_PYTHON := $(CURDIR)/$(PY)
export PYSPARK_DRIVER_PYTHON := $(CURDIR)/$(PY)

.PHONY: all venv toolchain jar install publish-local dist test lint fmt test-native test-jvm test-python demo bench chaos docs clean

all: install

# sbt's launcher by its Maven coordinates, from Maven's default repository (Maven Central); copied
# into a fresh directory first, so that an interrupted fetch never leaves a launcher behind.
$(SBT_LAUNCHER):
	rm -rf .build/launcher.tmp
	mkdir -p .build/launcher.tmp
	mvn -B -q org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy \
		-Dartifact=org.scala-sbt:sbt-launch:$(SBT_VERSION) -DoutputDirectory=.build/launcher.tmp
	mv .build/launcher.tmp/sbt-launch-$(SBT_VERSION).jar $@
	rm -rf .build/launcher.tmp

$(VENV)/.installed: python/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet "pyspark==4.3.0" -e "python[test]"
	touch $@

venv: $(VENV)/.installed

# Hadoop's HDFS mini cluster, for the tests that keep checkpoints on HDFS: hadoop-client-minicluster
# of the Hadoop version whose client jars pyspark ships, and the JUnit API it needs beside them.
MINICLUSTER := .build/minicluster
MINICLUSTER_EXTRAS := org.junit.jupiter:junit-jupiter-api:5.11.4 org.junit.platform:junit-platform-commons:1.11.4 \
	org.opentest4j:opentest4j:1.3.0 org.apiguardian:apiguardian-api:1.1.2
$(MINICLUSTER)/.fetched: $(VENV)/.installed
	rm -rf $(MINICLUSTER).tmp
	mkdir -p $(MINICLUSTER).tmp
	hadoop=$$(ls $(VENV)/lib/python3*/site-packages/pyspark/jars | sed -n 's/^hadoop-client-api-\(.*\)\.jar$$/\1/p'); \
	for artifact in org.apache.hadoop:hadoop-client-minicluster:$$hadoop $(MINICLUSTER_EXTRAS); do \
		mvn -B -q org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy \
			-Dartifact=$$artifact -DoutputDirectory=$(MINICLUSTER).tmp || exit 1; \
	done
	rm -rf $(MINICLUSTER)
	mv $(MINICLUSTER).tmp $(MINICLUSTER)
	touch $@

# The jars for s3a:// checkpoints (tests/test_object_store.py): hadoop-aws of pyspark's Hadoop
# version and the AWS SDK v2 modules S3A uses (tests/s3a/pom.xml), without what pyspark's jars have.
S3A_JARS := .build/s3a
$(S3A_JARS)/.fetched: $(VENV)/.installed tests/s3a/pom.xml
	rm -rf $(S3A_JARS).tmp
	hadoop=$$(ls $(VENV)/lib/python3*/site-packages/pyspark/jars | sed -n 's/^hadoop-client-api-\(.*\)\.jar$$/\1/p'); \
	mvn -B -q -f tests/s3a/pom.xml org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy-dependencies \
		-Dhadoop.version=$$hadoop -DincludeScope=runtime -DoutputDirectory=$(CURDIR)/$(S3A_JARS).tmp \
		-DexcludeGroupIds=io.netty,org.slf4j,commons-logging,commons-codec,org.apache.httpcomponents
	rm -rf $(S3A_JARS)
	mv $(S3A_JARS).tmp $(S3A_JARS)
	touch $@

# Debian's cross compiler and qemu-user (see CROSS_ARCH), installed with apt-get when missing. Only
# on Linux: elsewhere the jar carries the host's native filter alone.
toolchain:
ifeq ($(shell uname -s),Linux)
	@command -v $(CROSS_CC) >/dev/null && command -v $(CROSS_QEMU) >/dev/null || { \
		echo "installing Debian's $(CROSS_PACKAGES)"; \
		$(SUDO) apt-get update -qq && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(CROSS_PACKAGES) >/dev/null; }
endif

# The jar is built against the jars of the pyspark in .venv (see build.sbt).
jar: venv $(SBT_LAUNCHER) toolchain
	$(SBT) jvm/package
	mkdir -p python/ttlstore/jars
	rm -f python/ttlstore/jars/*.jar
	cp $(JAR) python/ttlstore/jars/

install: jar

# The jar, its sources and its Scaladoc with a pom (Spark, rocksdbjni and Scala `provided`) in the
# Maven repository $(MAVEN_REPO): spark-submit --packages io.ttlstore:ttlstore_2.13:$(VERSION)
# --repositories file://$(CURDIR)/$(MAVEN_REPO). Published again only when the jar changed.
publish-local: jar $(POM)

$(POM): $(JAR)
	rm -rf $(MAVEN_REPO)
	$(SBT) jvm/publish

test: lint test-native test-jvm test-python

# Python: ruff (lint) and mypy (types) with the settings in python/pyproject.toml.
lint: venv
	$(VENV)/bin/ruff check --config python/pyproject.toml python tests
	cd python && ../$(VENV)/bin/mypy --cache-dir ../.build/mypy

# The native filter's decision, with the golden vectors shared with the Scala tests and a bounded
# fuzz run, built with AddressSanitizer and UndefinedBehaviorSanitizer (Debian's gcc ships both).
NATIVE_SRC := jvm/src/main/c
NATIVE_TEST := jvm/target/native/test_ttl_expiry
GOLDEN := jvm/src/test/resources/golden
FUZZ_ITERATIONS ?= 200000

test-native: toolchain
	mkdir -p $(dir $(NATIVE_TEST))
	$(CC) -std=c11 -O1 -g -Wall -Wextra -Werror -fno-omit-frame-pointer \
		-fsanitize=address,undefined -fno-sanitize-recover=all -I$(NATIVE_SRC) \
		-o $(NATIVE_TEST) $(NATIVE_SRC)/ttl_expiry.c jvm/src/test/c/test_ttl_expiry.c
	$(NATIVE_TEST) $(GOLDEN)/expiry-vectors.tsv $(GOLDEN)/timestamped-values.tsv $(FUZZ_ITERATIONS)
ifeq ($(shell uname -s),Linux)
	# The same tests built for $(CROSS_ARCH), with UndefinedBehaviorSanitizer only (AddressSanitizer's
	# leak checker fails under qemu-user).
	$(CROSS_CC) -std=c11 -O1 -g -Wall -Wextra -Werror -fsanitize=undefined -fno-sanitize-recover=all \
		-I$(NATIVE_SRC) \
		-o $(NATIVE_TEST)-$(CROSS_ARCH) $(NATIVE_SRC)/ttl_expiry.c jvm/src/test/c/test_ttl_expiry.c
	$(CROSS_QEMU) -L /usr/$(CROSS_ARCH)-linux-gnu $(NATIVE_TEST)-$(CROSS_ARCH) \
		$(GOLDEN)/expiry-vectors.tsv $(GOLDEN)/timestamped-values.tsv $(FUZZ_ITERATIONS)
endif

# ScalaTest, after checking the Scala sources' formatting (.scalafmt.conf; `make fmt` applies it).
test-jvm: jar
	$(SBT) jvm/scalafmtCheckAll jvm/test

fmt: $(SBT_LAUNCHER)
	$(SBT) jvm/scalafmtAll

test-python: install publish-local $(MINICLUSTER)/.fetched $(S3A_JARS)/.fetched
	$(PY) -m pytest tests python/ttlstore --doctest-modules -q --durations=12

demo: install
	$(PY) -m ttlstore.demo

# The long fault runs: many fuzzed files per reader, the damage matrix with its outcomes, and the
# crash loop (hundreds of SIGKILLs); each rewrites its section of docs/reliability.md.
chaos: install
	mkdir -p bench-output
	TTLSTORE_FUZZ_INPUTS=1000 TTLSTORE_FUZZ_REPORT=$(CURDIR)/bench-output/fuzz.json \
		$(SBT) "jvm/testOnly io.ttlstore.fuzz.ReaderFuzzSuite"
	TTLSTORE_DAMAGE_REPORT=$(CURDIR)/bench-output/damage.json $(PY) -m pytest tests/test_damage_matrix.py -q
	PYTHONPATH=tests $(PY) tests/chaos/report.py
	PYTHONPATH=tests $(PY) tests/chaos/crash_loop.py chaos

bench: install
	mkdir -p bench-output
	$(SBT) -error "jvm/Test/runMain io.ttlstore.bench.TtlOverheadBench bench-output/ttl-overhead.json" \
		"jvm/Test/runMain io.ttlstore.bench.ExpiryCpuBench bench-output/expiry-cpu.json" \
		"jvm/Test/runMain io.ttlstore.bench.DiskChurnBench bench-output/disk-churn.json" \
		"jvm/Test/runMain io.ttlstore.bench.AdoptionBench bench-output/adoption.json"
	$(PY) tests/bench/run_bench.py

docs: venv $(SBT_LAUNCHER)
	$(SBT) -error "jvm/runMain io.ttlstore.config.ConfigDocs" > docs/configuration.md

# The wheel, with the jar it bundles (the build refuses to make one without it), into dist/, and
# the Maven artifact into the Maven repository dist/maven/.
dist: jar publish-local
	rm -rf dist
	$(PY) -m pip wheel --no-deps --no-build-isolation --quiet -w dist ./python
	cp -r $(MAVEN_REPO) dist/maven

clean:
	rm -rf jvm/target target project/target python/ttlstore/jars/*.jar .build demo-output bench-output dist
