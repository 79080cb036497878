package io.ttlstore.config

import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Paths}

import io.ttlstore.config.ValueForm.{Duration, Flag, Fraction, OneOf, Text, Whole}

/**
 * The Python package's table of options, generated from [[TtlStoreConfig]]: `make jar` (and
 * `make dev-jar`) write it to python/ttlstore/settings.json, which `ttlstore.settings` reads. Each
 * option is named in Python as its setting's last part in snake case (`maxMemoryUsageMB`:
 * `max_memory_usage_mb`; `nativeFilter.enabled`: `native_filter`).
 */
object PythonSettings {

  /** The Python option a setting is: its name's last part (its group's for `.enabled`), snake cased. */
  def optionName(key: ConfigKey[_]): String = {
    val parts = key.name.split('.')
    val last = if (parts.length > 1 && parts.last == "enabled") parts(parts.length - 2) else parts.last
    last.replaceAll("([a-z0-9])([A-Z])", "$1_$2").toLowerCase(java.util.Locale.ROOT)
  }

  /** The table as JSON: one object per setting, in [[TtlStoreConfig.all]]'s order. */
  def json: String =
    TtlStoreConfig.all.map(entry).mkString("[\n  ", ",\n  ", "\n]\n")

  private def entry(key: ConfigKey[_]): String = {
    val form: Seq[(String, String)] = key.form match {
      case Flag => Seq("form" -> quote("flag"))
      case Whole(min, max, _) => Seq("form" -> quote("whole"), "min" -> min.toString, "max" -> max.toString)
      case Fraction(min, max) => Seq("form" -> quote("fraction"), "min" -> min.toString, "max" -> max.toString)
      case OneOf(names) => Seq("form" -> quote("one_of"), "names" -> names.map(quote).mkString("[", ", ", "]"))
      case Duration(_) => Seq("form" -> quote("duration"))
      case Text(_) => Seq("form" -> quote("text"))
    }
    (Seq("option" -> quote(optionName(key)), "key" -> quote(key.key), "default" -> quote(key.defaultText),
      "scoped" -> key.scoped.toString) ++ form)
      .map { case (k, v) => s"${quote(k)}: $v" }.mkString("{", ", ", "}")
  }

  private def quote(s: String): String =
    "\"" + s.flatMap {
      case '"' => "\\\""
      case '\\' => "\\\\"
      case c if c < ' ' => f"\\u${c.toInt}%04x"
      case c => c.toString
    } + "\""

  /** Writes the table to the file `args(0)`, or prints it. */
  def main(args: Array[String]): Unit = args.headOption match {
    case Some(path) => Files.write(Paths.get(path), json.getBytes(StandardCharsets.UTF_8))
    case None => print(json)
  }
}
