package iolab.batch

/** One task: a whole Leibniz series, or one call of a service that sleeps `nanos`. */
sealed trait Task { def typeIndex: Int }
final case class CpuTask(terms: Long) extends Task { def typeIndex = 0 }
final case class IoTask(nanos: Long) extends Task { def typeIndex = 1 }

object Task {
  /** The task types a result reports, in table order (iolab's `TYPES`). */
  val Types: Vector[String] = Vector("cpu", "io")
}

/** The tasks of one batch, drawn from the mix with iolab's seeded draw, so a seed gives the
  * same order, terms and sleeps here as in the Rust executors. A batch of identical calls is
  * not materialised. */
sealed trait TaskList {
  def len: Int
  def get(i: Int): Task
  /** Which task types occur, indexed as [[Task.Types]]. */
  def typesPresent: Vector[Boolean]
}

final case class Uniform(n: Int, task: Task) extends TaskList {
  def len: Int = n
  def get(i: Int): Task = task
  def typesPresent: Vector[Boolean] = Vector.tabulate(2)(t => n > 0 && t == task.typeIndex)
}

final case class Drawn(tasks: Vector[Task]) extends TaskList {
  def len: Int = tasks.length
  def get(i: Int): Task = tasks(i)
  def typesPresent: Vector[Boolean] = Vector.tabulate(2)(t => tasks.exists(_.typeIndex == t))
}

object TaskList {
  def nanos(ms: Double): Long = (math.max(ms, 0.0) * 1e6).round

  /** Types shuffled (Fisher-Yates), then terms and sleeps drawn one per task, in task order. */
  def draw(mix: TaskMix, seed: Long): TaskList = mix match {
    case Calls(n, ms) => Uniform(n.toInt, IoTask(nanos(ms)))
    case Mixed(cpu, io, cpuTerms, ioMs) =>
      val rng = new SplitMix64(seed)
      val isCpu = Array.fill(cpu.toInt)(true) ++ Array.fill(io.toInt)(false)
      for (i <- isCpu.indices.reverse if i > 0) {
        val j = rng.below(i.toLong + 1).toInt
        val t = isCpu(i); isCpu(i) = isCpu(j); isCpu(j) = t
      }
      def pick[T](items: Vector[T], none: T): T =
        if (items.isEmpty) none else items(rng.below(items.length.toLong).toInt)
      Drawn(isCpu.toVector.map { c =>
        if (c) CpuTask(pick(cpuTerms, 0L)) else IoTask(nanos(pick(ioMs, 0.0)))
      })
  }
}

/** SplitMix64 with u64 arithmetic in a Long's bits: iolab's generator, bit for bit. */
final class SplitMix64(private var state: Long) {
  def next(): Long = {
    state += 0x9e3779b97f4a7c15L
    var z = state
    z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L
    z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL
    z ^ (z >>> 31)
  }

  /** Uniform in `0 until n` (n > 0), by rejection (no modulo bias), as iolab does. */
  def below(n: Long): Long = {
    val zone = -1L - java.lang.Long.remainderUnsigned(-1L, n)
    var x = next()
    while (java.lang.Long.compareUnsigned(x, zone) >= 0) x = next()
    java.lang.Long.remainderUnsigned(x, n)
  }
}
