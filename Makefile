# ttlstore's build. `make` builds the jar and installs the Python package (with pyspark and the
# test tools) into .venv; `make demo` and `make test` build first, so each works as the first
# command on a fresh machine. Everything is fetched from Maven Central and PyPI by this file.

SHELL := /bin/bash
.DEFAULT_GOAL := all

PYTHON ?= python3
CC ?= cc
VENV := .venv
PY := $(VENV)/bin/python
VERSION := $(shell sed -n 's/^__version__ = "\(.*\)"/\1/p' python/ttlstore/_version.py)
JAR := jvm/target/ttlstore-$(VERSION).jar
SBT_VERSION := $(shell sed -n 's/^sbt.version=//p' project/build.properties)
SBT_LAUNCHER := .build/sbt-launch-$(SBT_VERSION).jar
MAVEN_CENTRAL := https://repo1.maven.org/maven2
# sbt from its launcher on Maven Central, resolving only from Maven Central (project/repositories).
SBT := java -Xmx2g -Xss4m -Dsbt.repository.config=project/repositories \
	-Dsbt.override.build.repos=true -Dsbt.server.forcestart=false -Dsbt.supershell=false \
	-Dsbt.color=false -Dsbt.log.noformat=true -Dsbt.ci=true -jar $(SBT_LAUNCHER)
# Python workers must run the interpreter that has pyspark and ttlstore installed.
export PYSPARK_PYTHON := $(CURDIR)/$(PY)
export PYSPARK_DRIVER_PYTHON := $(CURDIR)/$(PY)

.PHONY: all venv native jar install test test-native test-jvm test-python demo bench docs clean

all: install

$(SBT_LAUNCHER):
	mkdir -p .build
	curl -fsSL --retry 3 -o $@.tmp $(MAVEN_CENTRAL)/org/scala-sbt/sbt-launch/$(SBT_VERSION)/sbt-launch-$(SBT_VERSION).jar
	mv $@.tmp $@

$(VENV)/.installed: python/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet "pyspark==4.3.0" -e "python[test]"
	touch $@

venv: $(VENV)/.installed

# The native TTL compaction filter, for the platform the build runs on; sbt packs it into the jar
# from jvm/target/native-resources. JNI headers come from the JDK that runs the build.
JAVA_HOME ?= $(shell dirname $$(dirname $$(readlink -f $$(command -v javac))))
PLATFORM := $(shell uname -s | tr A-Z a-z)-$(shell uname -m | sed 's/amd64/x86_64/;s/arm64/aarch64/')
NATIVE_LIB := jvm/target/native-resources/io/ttlstore/native/$(PLATFORM)/libttlstore_filter.so

native: $(NATIVE_LIB)

$(NATIVE_LIB): jvm/src/main/c/ttl_expiry.c jvm/src/main/c/ttl_expiry.h jvm/src/main/c/ttl_filter_jni.c
	mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -Wall -Wextra -Werror -fPIC -shared -I$(JAVA_HOME)/include \
		-I$(JAVA_HOME)/include/$(shell uname -s | tr A-Z a-z) -o $@ \
		jvm/src/main/c/ttl_expiry.c jvm/src/main/c/ttl_filter_jni.c -ldl

# The jar is built against the jars of the pyspark in .venv (see build.sbt).
jar: venv $(SBT_LAUNCHER) native
	$(SBT) jvm/package
	mkdir -p python/ttlstore/jars
	rm -f python/ttlstore/jars/*.jar
	cp $(JAR) python/ttlstore/jars/

install: jar

test: test-native test-jvm test-python

# The native filter's decision, with the golden vectors shared with the Scala tests and a bounded
# fuzz run, built with AddressSanitizer and UndefinedBehaviorSanitizer (Debian's gcc ships both).
NATIVE_SRC := jvm/src/main/c
NATIVE_TEST := jvm/target/native/test_ttl_expiry
GOLDEN := jvm/src/test/resources/golden
FUZZ_ITERATIONS ?= 200000

test-native:
	mkdir -p $(dir $(NATIVE_TEST))
	$(CC) -std=c11 -O1 -g -Wall -Wextra -Werror -fno-omit-frame-pointer \
		-fsanitize=address,undefined -fno-sanitize-recover=all -I$(NATIVE_SRC) \
		-o $(NATIVE_TEST) $(NATIVE_SRC)/ttl_expiry.c jvm/src/test/c/test_ttl_expiry.c
	$(NATIVE_TEST) $(GOLDEN)/expiry-vectors.tsv $(GOLDEN)/timestamped-values.tsv $(FUZZ_ITERATIONS)

test-jvm: jar native
	$(SBT) jvm/test

test-python: install
	$(PY) -m pytest tests -q

demo: install
	$(PY) -m ttlstore.demo

bench: install
	mkdir -p bench-output
	$(SBT) -error "jvm/Test/runMain io.ttlstore.bench.TtlOverheadBench bench-output/ttl-overhead.json" \
		"jvm/Test/runMain io.ttlstore.bench.ExpiryCpuBench bench-output/expiry-cpu.json" \
		"jvm/Test/runMain io.ttlstore.bench.DiskChurnBench bench-output/disk-churn.json" \
		"jvm/Test/runMain io.ttlstore.bench.AdoptionBench bench-output/adoption.json"
	$(PY) tests/bench/run_bench.py

docs: venv $(SBT_LAUNCHER)
	$(SBT) -error "jvm/runMain io.ttlstore.ConfigDocs" > docs/configuration.md

clean:
	rm -rf jvm/target target project/target python/ttlstore/jars .build demo-output bench-output
