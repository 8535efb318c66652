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
      if (m.workers < 1) throw new BadSpec("spec.master.workers must be at least 1")
      m.sharedPool.foreach(d => if (d < 1) throw new BadSpec("spec.master.shared_pool must be at least 1"))
      new ActorBatch(m)
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
    for ((k, v) <- e.params if v < 1) throw new BadSpec(s"knob '$k' must be at least 1, got $v")
    e.model match {
      case "sequential"         => Sequential
      case "pool"               => e.params.get("threads").fold[Runner](new GlobalPool)(new FixedPool(_))
      case "thread-per-request" => new GlobalBlocking(e.params.get("max_threads"))
      case "loop-async"         => new ScheduledPromise(e.params.get("workers"))
    }
  }
}
