package iolab.batch

import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicLongArray

/** Start and end of every task in nanoseconds since the batch start (+1, so 0 is "not yet"),
  * one slot pair per task: two plain atomic stores per task, whatever thread runs it. Also
  * notes which threads ran tasks (`threads_used`: what a pool really lent the batch). */
final class Timings(n: Int) {
  private val start = System.nanoTime()
  private val slots = new AtomicLongArray(2 * n)
  private val threads = ConcurrentHashMap.newKeySet[java.lang.Long]()

  def nowNs: Long = System.nanoTime() - start
  def elapsedS: Double = nowNs / 1e9

  /** Task `i` starts being served (a thread or a timer took it). */
  def begin(i: Int): Unit = {
    slots.set(2 * i, nowNs + 1)
    threads.add(Thread.currentThread().threadId())
  }

  /** Task `i` is done. */
  def end(i: Int): Unit = slots.set(2 * i + 1, nowNs + 1)

  /** Task `i` could not be run. */
  def fail(i: Int): Unit = slots.set(2 * i + 1, Timings.Failed)

  /** `(startNs, endNs)` of task `i` if it completed. */
  def span(i: Int): Option[(Long, Long)] = {
    val s = slots.get(2 * i)
    val e = slots.get(2 * i + 1)
    if (s != 0 && e != 0 && e != Timings.Failed) Some((s - 1, e - 1)) else None
  }

  def failed: Long = (0 until n).count(i => slots.get(2 * i + 1) == Timings.Failed).toLong

  /** Distinct threads that started a task. */
  def threadsUsed: Int = threads.size
}

object Timings {
  private val Failed = Long.MaxValue
}
