package io.ttlstore

import java.io.{ByteArrayOutputStream, DataOutputStream}

import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

import io.ttlstore.checkpoint.RecordOutput

class RecordOutputSuite extends AnyFunSuite {

  test("fields are laid out byte for byte as DataOutputStream lays them out, across buffer boundaries") {
    val r = new Random(7)
    val theirs = new ByteArrayOutputStream()
    val ours = new ByteArrayOutputStream()
    val data = new DataOutputStream(theirs)
    val out = new RecordOutput(ours, size = 64)
    (0 until 5000).foreach { _ =>
      r.nextInt(5) match {
        case 0 => val b = r.nextInt(256); data.writeByte(b); out.writeByte(b)
        case 1 => val i = r.nextInt(); data.writeInt(i); out.writeInt(i)
        case 2 => val l = r.nextLong(); data.writeLong(l); out.writeLong(l)
        case 3 =>
          val bytes = Array.fill(r.nextInt(150))(r.nextInt(256).toByte) // some longer than the buffer
          data.write(bytes); out.write(bytes)
        case _ => out.flush()
      }
    }
    out.close()
    data.close()
    assert(ours.toByteArray.sameElements(theirs.toByteArray))
  }

  test("nothing reaches the stream before a flush, close or a full buffer") {
    val sink = new ByteArrayOutputStream()
    val out = new RecordOutput(sink, size = 16)
    out.writeLong(1L)
    assert(sink.size == 0)
    out.writeLong(2L)
    out.writeByte(3)
    assert(sink.size == 16)
    out.close()
    assert(sink.size == 17)
  }
}
