package io.ttlstore

import java.io.{EOFException, IOException}
import java.net.{SocketException, SocketTimeoutException}
import java.util.zip.ZipException

import org.scalatest.funsuite.AnyFunSuite

import io.ttlstore.errors.{FileSystemFailure, StorageErrors}

/**
 * Telling a file system that did not answer from a damaged file. The query-level proof (a proxy in
 * front of S3 resetting and stalling a real query's requests) is tests/test_flaky_object_store.py.
 */
class FileSystemFailureSuite extends AnyFunSuite {

  test("a connection reset or a timed-out read, wrapped or not, is the file system's failure") {
    assert(FileSystemFailure.in(new SocketException("Connection reset")))
    assert(FileSystemFailure.in(new IOException("reading 3.changelog", new SocketTimeoutException("Read timed out"))))
  }

  test("what a damaged file raises is not the file system's failure") {
    assert(!FileSystemFailure.in(new EOFException()))
    assert(!FileSystemFailure.in(new ZipException("invalid entry CRC")))
    assert(!FileSystemFailure.in(new IOException("Stream is corrupted")))
  }

  test("the error names the file, says it is not known to be damaged, and is recognised as such again") {
    val e = StorageErrors.checkpointReadFailed("s3a://b/c/state/0/0/ttlstore/3.changelog",
      new SocketException("Connection reset"))
    assert(e.errorName == "CHECKPOINT_READ_FAILED")
    assert(e.getMessage.contains("Reading s3a://b/c/state/0/0/ttlstore/3.changelog from the checkpoint's file system"))
    assert(e.getMessage.contains("not known to be damaged"))
    assert(FileSystemFailure.in(new RuntimeException(e)))
  }
}
