package iolab.batch

/** The models this runtime serves and the knobs each takes (runtime.toml says the same), and
  * the runner for a spec file: E1's actors when `spec.master` is set, else the executor. */
object Models {
  val Knobs: Map[String, Seq[String]] = Map(
    "sequential" -> Seq(),
    "pool" -> Seq("threads"),
    "thread-per-request" -> Seq("max_threads"),
    "loop-async" -> Seq("workers")
  )
  private val Order = Seq("sequential", "pool", "thread-per-request", "loop-async")

  def runner(file: SpecFile): Runner = (file.spec.master, file.executor) match {
    case (Some(m), _) =>
      // As iolab does: 0 workers or a pool of 0 means 1.
      new ActorBatch(m.copy(workers = m.workers.max(1), sharedPool = m.sharedPool.map(_.max(1))))
    case (None, Some(e)) => executor(e)
    case (None, None) =>
      throw new BadSpec("the spec file has neither spec.master (E1 actors) nor an executor (E3); give one")
  }

  private def executor(e: Executor): Runner = {
    val knobs = Knobs.getOrElse(e.model,
      throw new BadSpec(s"model '${e.model}' is not served by the scala runtime (serves: ${Order.mkString(", ")})"))
    for (k <- e.params.keys if !knobs.contains(k))
      throw new BadSpec(
        s"knob '$k' does not apply to model '${e.model}' on the scala runtime (" +
          (if (knobs.isEmpty) "it takes no knobs" else s"it takes: ${knobs.mkString(", ")}") + ")")
    // As iolab does: a knob of 0 means 1.
    def knob(k: String) = e.params.get(k).map(_.max(1))
    e.model match {
      case "sequential"         => Sequential
      case "pool"               => knob("threads").fold[Runner](new GlobalPool)(new FixedPool(_))
      case "thread-per-request" => new GlobalBlocking(knob("max_threads"))
      case "loop-async"         => new ScheduledPromise(knob("workers"))
    }
  }
}
