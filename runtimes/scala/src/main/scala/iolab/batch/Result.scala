package iolab.batch

import com.fasterxml.jackson.databind.ObjectMapper
import com.fasterxml.jackson.databind.node.{JsonNodeFactory, ObjectNode}

/** One run's result: iolab's `BatchResult`, with its exact field names. */
final case class BatchResult(
    model: Option[String],
    params: Map[String, Any],
    tasks: Long,
    failed: Long,
    totalS: Double,
    byType: Map[String, TypeStats],
    peakThreads: Long,
    peakRssMb: Double,
    cpuUtilisation: Double,
    failure: Option[String],
    counters: Map[String, Double]
)

/** Renders the `iolab.batch/1` document (iolab's `BatchFile`). Integers stay integers, so
  * serde reads u64 fields (`tasks`, `count`, `peak_threads`) without complaint. */
object Result {
  val Schema = "iolab.batch/1"
  private val f = JsonNodeFactory.instance

  def document(runs: Seq[BatchResult]): String = {
    val doc = f.objectNode()
    doc.put("schema", Schema)
    val arr = doc.putArray("runs")
    runs.foreach(r => arr.add(run(r)))
    new ObjectMapper().writeValueAsString(doc)
  }

  private def run(r: BatchResult): ObjectNode = {
    val o = f.objectNode()
    r.model match { case Some(m) => o.put("model", m); case None => o.putNull("model") }
    val params = o.putObject("params")
    r.params.toSeq.sortBy(_._1).foreach { case (k, v) => putAny(params, k, v) }
    o.put("tasks", r.tasks)
    o.put("failed", r.failed)
    o.put("total_s", r.totalS)
    val byType = o.putObject("by_type")
    r.byType.toSeq.sortBy(_._1).foreach { case (k, s) =>
      val t = byType.putObject(k)
      t.put("count", s.count)
      t.put("mean_ms", s.meanMs)
      t.put("p99_ms", s.p99Ms)
      t.put("wait_mean_ms", s.waitMeanMs)
      t.put("service_mean_ms", s.serviceMeanMs)
      t.put("wait_p99_ms", s.waitP99Ms)
      t.put("service_p99_ms", s.serviceP99Ms)
    }
    o.put("peak_threads", r.peakThreads)
    o.put("peak_rss_mb", r.peakRssMb)
    o.put("cpu_utilisation", r.cpuUtilisation)
    r.failure.foreach(o.put("failure", _))
    if (r.counters.nonEmpty) {
      val c = o.putObject("counters")
      r.counters.toSeq.sortBy(_._1).foreach { case (k, v) => c.put(k, v) }
    }
    o
  }

  private def putAny(o: ObjectNode, k: String, v: Any): Unit = v match {
    case x: Int            => o.put(k, x)
    case x: Long           => o.put(k, x)
    case x: BigInt         => o.put(k, x.bigInteger)
    case x: Double         => o.put(k, x)
    case x: Boolean        => o.put(k, x)
    case x: String         => o.put(k, x)
    case other             => o.put(k, String.valueOf(other))
  }

  def round3(x: Double): Double = math.rint(x * 1000) / 1000
}
