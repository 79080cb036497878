package io.ttlstore.ttl

/** A value of one of the TTL enums, written in settings and records by its name. */
trait Named { def name: String }
