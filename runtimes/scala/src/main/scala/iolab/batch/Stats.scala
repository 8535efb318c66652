package iolab.batch

/** Statistics of one task type (iolab's `TaskTypeStats`); times in ms from the batch start. */
final case class TypeStats(
    count: Long,
    meanMs: Double,
    p99Ms: Double,
    waitMeanMs: Double,
    serviceMeanMs: Double,
    waitP99Ms: Double,
    serviceP99Ms: Double
)

/** Folds per-task spans into per-type statistics, as iolab's `measure::task_stats`: done = end,
  * wait = start (time until a thread or timer took the task), service = end - start. */
object Stats {
  def byType(tasks: TaskList, t: Timings): (Map[String, TypeStats], Map[String, Double]) = {
    val present = tasks.typesPresent
    val spansByType = Array.fill(2)(Vector.newBuilder[(Long, Long)])
    for (i <- 0 until tasks.len; s <- t.span(i)) spansByType(tasks.get(i).typeIndex) += s
    val out = for (ty <- Task.Types.indices if present(ty)) yield {
      val spans = spansByType(ty).result()
      def ms(ns: Long) = ns / 1e6
      val done = spans.map(s => ms(s._2)).toArray
      val wait = spans.map(s => ms(s._1)).toArray
      val service = spans.map(s => ms(math.max(s._2 - s._1, 0L))).toArray
      val name = Task.Types(ty)
      val stats = TypeStats(spans.length.toLong, mean(done), p99(done), mean(wait), mean(service), p99(wait), p99(service))
      (name -> stats, s"peak_${name}_in_service" -> peakOverlap(spans).toDouble)
    }
    (out.map(_._1).toMap, out.map(_._2).toMap)
  }

  def mean(v: Array[Double]): Double = if (v.isEmpty) 0.0 else v.sum / v.length

  /** Nearest-rank 99th percentile. */
  def p99(v: Array[Double]): Double =
    if (v.isEmpty) 0.0
    else {
      val sorted = v.sorted
      val rank = math.min(math.max(math.ceil(v.length * 0.99).toInt, 1), v.length) - 1
      sorted(rank)
    }

  /** Most spans open at one instant (an end at t closes before a start at t). */
  def peakOverlap(spans: Seq[(Long, Long)]): Long = {
    val events = spans.flatMap { case (s, e) => Seq((s, 1), (e, -1)) }.sorted
    var open, peak = 0L
    for ((_, d) <- events) { open += d; peak = math.max(peak, open) }
    peak
  }
}
