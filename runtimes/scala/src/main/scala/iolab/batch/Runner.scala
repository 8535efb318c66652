package iolab.batch

import java.util.concurrent.atomic.AtomicBoolean

/** What every executor shares: the tasks, where their times go, the cancel flag (looked at
  * before each task is handed out) and the machine's cores. */
final class Ctx(val tasks: TaskList, val timings: Timings, cancel: AtomicBoolean, val cores: Int) {
  def cancelled: Boolean = cancel.get()
  def len: Int = tasks.len

  /** Run task `i` on this thread, holding it for the whole task (a series or a sleep). */
  def runBlocking(i: Int): Unit = {
    timings.begin(i)
    try {
      tasks.get(i) match {
        case CpuTask(terms) => Leibniz(terms)
        case IoTask(nanos)  => Thread.sleep(java.time.Duration.ofNanos(nanos))
      }
      timings.end(i)
    } catch { case _: InterruptedException => timings.fail(i) }
  }
}

/** What an executor reports beside the per-task times. */
final case class Outcome(
    failure: Option[String] = None,
    /** Effective knobs and sizes (defaults resolved), shown with the result. */
    params: Map[String, Any] = Map.empty,
    counters: Map[String, Double] = Map.empty,
    /** Most threads the executor itself had alive at once, when it knows exactly. */
    threadsHint: Option[Long] = None
)

/** One way of running a batch (an E3 executor or E1's actors). Built once its knobs are
  * checked; `prepare` runs before the batch clock starts (e.g. an actor system boots). */
trait Runner {
  /** Pool sizes the probe samples while the batch runs (name -> current value). */
  def gauges: Map[String, () => Long] = Map.empty
  def prepare(): Unit = ()
  def run(ctx: Ctx): Outcome
  /** After the batch: stop what `prepare` or `run` started. */
  def close(): Unit = ()
}
