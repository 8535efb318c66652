package iolab.batch

import java.util.concurrent.atomic.AtomicBoolean

/** One batch run, as iolab's `batch::run`: draw the tasks, start the probe and the clock, hand
  * the tasks to the runner, fold what was measured into a [[BatchResult]]. `cancel` stops the
  * hand-out (tasks not started are counted in `counters.skipped`); [[partial]] folds a batch
  * that has not finished, for a SIGTERM that cannot wait for it. */
final class Batch(spec: BatchSpec, model: Option[String], runner: Runner, cancel: AtomicBoolean) {
  private val tasks = TaskList.draw(spec.tasks, spec.seed)
  private val cores = Runtime.getRuntime.availableProcessors
  @volatile private var live: Option[(Ctx, Probe)] = None

  def run(): BatchResult = {
    runner.prepare()
    // Warm-up: the same runner on a few tiny tasks, so class loading and the first lambda
    // bootstraps (hundreds of ms on a busy machine) do not land in the first measured task.
    // Pools keep the threads it started, as a running application's pools do.
    runner.run(new Ctx(Batch.warmup(spec.tasks), new Timings(Batch.WarmupTasks), new AtomicBoolean(false), cores))
    val probe = new Probe(runner.gauges)
    val ctx = new Ctx(tasks, new Timings(tasks.len), cancel, cores)
    live = Some((ctx, probe))
    val outcome =
      try runner.run(ctx)
      catch { case e: Exception => Outcome(failure = Some(s"the batch failed: $e")) }
    val totalS = ctx.timings.elapsedS
    fold(ctx, probe, outcome, totalS)
  }

  /** The result so far of a batch still running (None before it started). */
  def partial(): Option[BatchResult] = live.map { case (ctx, probe) =>
    fold(ctx, probe, Outcome(), ctx.timings.elapsedS)
  }

  private def fold(ctx: Ctx, probe: Probe, out: Outcome, totalS: Double): BatchResult = {
    val peaks = probe.finish(out.threadsHint)
    val (byType, typeCounters) = Stats.byType(tasks, ctx.timings)
    val n = tasks.len.toLong
    val failed = ctx.timings.failed
    val completed = byType.values.map(_.count).sum
    val skipped = n - completed - failed
    val counters = typeCounters ++ out.counters ++
      peaks.gauges.map { case (k, v) => k -> v.toDouble } ++
      Map(
        "threads_before" -> peaks.threadsBefore.toDouble,
        "rss_before_mb" -> Result.round3(peaks.rssBeforeMb),
        "threads_used" -> ctx.timings.threadsUsed.toDouble
      ) ++ (if (skipped > 0) Map("skipped" -> skipped.toDouble) else Map.empty)
    val failure = out.failure
      .orElse(if (failed > 0) Some(s"$failed of $n tasks failed") else None)
      .orElse(if (skipped > 0) Some(s"cancelled: $skipped of $n tasks not run") else None)
    BatchResult(
      model = model,
      params = Batch.specParams(spec) ++ out.params,
      tasks = n,
      failed = failed,
      totalS = totalS,
      byType = byType,
      peakThreads = peaks.threads,
      peakRssMb = Result.round3(peaks.rssMb),
      cpuUtilisation = Result.round3(peaks.cpuUtilisation),
      failure = failure,
      counters = counters
    )
  }

  def close(): Unit = runner.close()
}

object Batch {
  val WarmupTasks = 8

  /** 8 sleeps of 1 ms, half of them 100,000-term series when the batch has CPU tasks. */
  def warmup(mix: TaskMix): TaskList = mix match {
    case _: Calls => Uniform(WarmupTasks, IoTask(1000000L))
    case _: Mixed => Drawn(Vector.tabulate(WarmupTasks)(i => if (i % 2 == 0) CpuTask(100000L) else IoTask(1000000L)))
  }

  /** The spec's own parameters, as iolab records them; the runner adds the knobs it used. */
  def specParams(spec: BatchSpec): Map[String, Any] = {
    val tasks: Map[String, Any] = spec.tasks match {
      case Calls(n, ms)        => Map("calls" -> n, "ms" -> ms)
      case Mixed(cpu, io, _, _) => Map("cpu_tasks" -> cpu, "io_tasks" -> io)
    }
    val master: Map[String, Any] =
      spec.master.fold(Map.empty[String, Any])(m => Map("workers" -> m.workers, "worker" -> m.worker))
    Map[String, Any]("seed" -> BigInt(java.lang.Long.toUnsignedString(spec.seed)), "runtime" -> "scala") ++ tasks ++ master
  }
}
