package iolab.batch

import java.util.concurrent.ThreadFactory
import java.util.concurrent.atomic.AtomicInteger

/** Named daemon threads, so a stuck pool never keeps the JVM from exiting. */
object Named {
  def daemon(prefix: String): ThreadFactory = {
    val n = new AtomicInteger()
    (r: Runnable) => {
      val t = new Thread(r, s"$prefix-${n.incrementAndGet()}")
      t.setDaemon(true)
      t
    }
  }
}
