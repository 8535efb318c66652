package iolab.batch

/** `pool` with no `threads`: E3's `ExecutionContext.global` as it comes, `cores` threads
  * (16 on the article's machine); a sleep holds a thread with no `blocking {}` to compensate,
  * so T(n) = ceil(n/cores) x S. */
final class GlobalPool extends Runner {
  override def gauges: Map[String, () => Long] = Map("peak_pool_threads" -> (() => GlobalEc.poolSize()))

  def run(ctx: Ctx): Outcome = {
    FutureBatch.blocking(ctx)(GlobalEc.ec)
    Outcome(
      params = Map("threads" -> GlobalEc.parallelism, "ec" -> "global"),
      counters = Map("parallelism" -> GlobalEc.parallelism.toDouble)
    )
  }
}
