package iolab.batch

import com.fasterxml.jackson.databind.JsonNode
import com.fasterxml.jackson.databind.ObjectMapper

import scala.jdk.CollectionConverters._

/** Bad input: one line on stderr, exit code 2. */
final class BadSpec(msg: String) extends Exception(msg)

/** What tasks a batch runs (iolab's `TaskMix`, tagged by `kind`). */
sealed trait TaskMix { def len: Long }

/** E1: `cpu` CPU tasks (terms drawn from `cpuTerms`), `io` IO tasks (sleeps drawn from `ioMs`). */
final case class Mixed(cpu: Long, io: Long, cpuTerms: Vector[Long], ioMs: Vector[Double]) extends TaskMix {
  def len: Long = cpu + io
}

/** E3: `n` calls of one blocking service taking `ms` each. */
final case class Calls(n: Long, ms: Double) extends TaskMix { def len: Long = n }

/** E1's master set-up: W workers of one kind; `sharedPool` sizes the dispatcher. */
final case class MasterSpec(workers: Int, worker: String, sharedPool: Option[Int])

/** One batch run (iolab's `BatchSpec`). The seed is a u64 kept in a Long's bits. */
final case class BatchSpec(tasks: TaskMix, master: Option[MasterSpec], seed: Long)

/** An executor: a model and its knobs (iolab's `ModelParams`, knob name to value). */
final case class Executor(model: String, params: Map[String, Int])

/** The `--spec` file: `{"spec": BatchSpec, "executor": {"model", "params"}}`. */
final case class SpecFile(spec: BatchSpec, executor: Option[Executor])

/** Reads a spec file with iolab's serde field names, refusing what iolab would refuse. */
object Spec {
  val WorkerKinds: Seq[String] = Seq("blocking", "shared-pool", "timer")
  /** iolab's one list of knobs (`ModelParams`, deny_unknown_fields). */
  val Knobs: Seq[String] =
    Seq("threads", "max_connections", "backlog", "workers", "offload", "max_threads", "mc_pool", "pg_pool")
  /** IO backends this runtime serves: the embedded sleep only. */
  val Backends: Seq[String] = Seq("sleep")

  def read(path: String): SpecFile = {
    val root =
      try new ObjectMapper().readTree(new java.io.File(path))
      catch { case e: Exception => throw new BadSpec(s"cannot read spec file '$path': ${firstLine(e)}") }
    if (root == null || !root.isObject) throw new BadSpec(s"spec file '$path' must hold a JSON object")
    val spec = batchSpec(field(root, "spec", "the file"))
    val executor = opt(root, "executor").map(executorOf)
    SpecFile(spec, executor)
  }

  private def batchSpec(n: JsonNode): BatchSpec = {
    obj(n, "spec")
    opt(n, "io_backend").map(str(_, "spec.io_backend")).foreach { b =>
      if (!Backends.contains(b))
        throw new BadSpec(s"io_backend '$b' is not served by the scala runtime (it runs IO tasks on the embedded sleep only); drop io_backend or use a runtime with '$b'")
    }
    BatchSpec(taskMix(field(n, "tasks", "spec")), opt(n, "master").map(masterSpec), u64(field(n, "seed", "spec"), "spec.seed"))
  }

  private def taskMix(n: JsonNode): TaskMix = {
    obj(n, "spec.tasks")
    str(field(n, "kind", "spec.tasks"), "spec.tasks.kind") match {
      case "mixed" =>
        val cpuTerms = arr(field(n, "cpu_terms", "spec.tasks")).map(u64(_, "spec.tasks.cpu_terms[]"))
        val ioMs = arr(field(n, "io_ms", "spec.tasks")).map(f64(_, "spec.tasks.io_ms[]"))
        Mixed(u32(field(n, "cpu", "spec.tasks"), "spec.tasks.cpu"), u32(field(n, "io", "spec.tasks"), "spec.tasks.io"), cpuTerms, ioMs)
      case "calls" =>
        val calls = u64(field(n, "n", "spec.tasks"), "spec.tasks.n")
        if (calls > Int.MaxValue - 8) throw new BadSpec(s"spec.tasks.n = $calls is more than this runtime holds (at most ${Int.MaxValue - 8})")
        Calls(calls, f64(field(n, "ms", "spec.tasks"), "spec.tasks.ms"))
      case other => throw new BadSpec(s"unknown spec.tasks.kind '$other' (expected mixed or calls)")
    }
  }

  private def masterSpec(n: JsonNode): MasterSpec = {
    obj(n, "spec.master")
    val worker = str(field(n, "worker", "spec.master"), "spec.master.worker")
    if (!WorkerKinds.contains(worker))
      throw new BadSpec(s"unknown worker '$worker' (expected one of: ${WorkerKinds.mkString(", ")})")
    val pool = opt(n, "shared_pool").map(u32(_, "spec.master.shared_pool").toInt)
    MasterSpec(u32(field(n, "workers", "spec.master"), "spec.master.workers").toInt, worker, pool)
  }

  private def executorOf(n: JsonNode): Executor = {
    obj(n, "executor")
    val model = str(field(n, "model", "executor"), "executor.model")
    val params = opt(n, "params").map { p =>
      obj(p, "executor.params")
      p.fields.asScala.map { e =>
        if (!Knobs.contains(e.getKey))
          throw new BadSpec(s"unknown knob '${e.getKey}' in executor.params (expected one of: ${Knobs.mkString(", ")})")
        e.getKey -> u32(e.getValue, s"executor.params.${e.getKey}").toInt
      }.toMap
    }
    Executor(model, params.getOrElse(Map.empty))
  }

  private def firstLine(e: Exception): String = String.valueOf(e.getMessage).linesIterator.nextOption().getOrElse("")

  private def opt(n: JsonNode, key: String): Option[JsonNode] = Option(n.get(key)).filterNot(_.isNull)

  private def field(n: JsonNode, key: String, where: String): JsonNode =
    opt(n, key).getOrElse(throw new BadSpec(s"$where lacks the field '$key'"))

  private def obj(n: JsonNode, where: String): Unit =
    if (!n.isObject) throw new BadSpec(s"$where must be a JSON object")

  private def arr(n: JsonNode): Vector[JsonNode] =
    if (n.isArray) n.elements.asScala.toVector else throw new BadSpec(s"expected an array, got $n")

  private def str(n: JsonNode, where: String): String =
    if (n.isTextual) n.asText else throw new BadSpec(s"$where must be a string, got $n")

  private def f64(n: JsonNode, where: String): Double =
    if (n.isNumber) n.asDouble else throw new BadSpec(s"$where must be a number, got $n")

  /** An unsigned 64-bit integer, kept in a Long's bits (serde's u64). */
  private def u64(n: JsonNode, where: String): Long = {
    val big = if (n.isIntegralNumber) n.bigIntegerValue else null
    if (big == null || big.signum < 0 || big.bitLength > 64)
      throw new BadSpec(s"$where must be an integer in 0..2^64-1, got $n")
    big.longValue
  }

  private def u32(n: JsonNode, where: String): Long = {
    val v = u64(n, where)
    // serde's u32 goes to 4294967295; a JVM count stops at Int.MaxValue.
    if (v < 0 || v > Int.MaxValue) throw new BadSpec(s"$where must be an integer in 0..${Int.MaxValue}, got $n")
    v
  }
}
