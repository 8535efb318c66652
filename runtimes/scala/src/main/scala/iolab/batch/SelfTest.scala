package iolab.batch

/** Checks of the pure parts, run by ./test (`java -cp iolab-scala.jar iolab.batch.SelfTest`):
  * the generator against SplitMix64's published first outputs, the seeded E1 draw against the
  * invariants iolab's own tests assert, the Leibniz series, percentiles and overlap. */
object SelfTest {
  private var passed, failed = 0

  private def check(name: String)(ok: => Boolean): Unit =
    if (try ok catch { case _: Exception => false }) passed += 1
    else { failed += 1; System.err.println(s"FAIL $name") }

  def main(args: Array[String]): Unit = {
    check("splitmix64 seed 0 gives the reference outputs") {
      val r = new SplitMix64(0L)
      Seq(r.next(), r.next(), r.next()) == Seq(0xe220a8397b1dcdafL, 0x6e789e6aa1b965f4L, 0x06c45d188009454fL)
    }
    check("below() stays in range") {
      val r = new SplitMix64(9L)
      (1 to 1000).forall { k => val x = r.below(7); x >= 0 && x < 7 }
    }
    val e1 = Mixed(100, 100, Vector(308836549L, 433275937L, 505880809L, 281779493L, 346726528L, 367281330L,
      497563398L, 465600232L, 526508662L, 662777539L), Vector(5000.0, 5500.0, 6000.0, 6500.0, 7000.0))
    check("the E1 draw is seeded, 100 + 100 tasks, terms and sleeps from their lists") {
      val (a, b, c) = (TaskList.draw(e1, 7), TaskList.draw(e1, 7), TaskList.draw(e1, 8))
      val Drawn(ta) = a: @unchecked
      a == b && a != c && ta.length == 200 && ta.count(_.isInstanceOf[CpuTask]) == 100 && ta.forall {
        case CpuTask(t) => e1.cpuTerms.contains(t)
        case IoTask(ns) => ns % 500000000L == 0 && ns >= 5000000000L && ns <= 7000000000L
      }
    }
    check("calls are uniform and not materialised") {
      val l = TaskList.draw(Calls(1000000, 1000.0), 1)
      l.len == 1000000 && l.get(999999) == IoTask(1000000000L) && l.typesPresent == Vector(false, true)
    }
    check("leibniz converges to pi") {
      math.abs(Leibniz(1000000) - math.Pi) < 1e-5 && Leibniz(0) == 0.0 && Leibniz(1) == 4.0
    }
    check("p99 and peak overlap as iolab computes them") {
      Stats.p99((1 to 100).map(_.toDouble).toArray) == 99.0 && Stats.p99(Array(5.0)) == 5.0 &&
      Stats.peakOverlap(Seq((0L, 10L), (5L, 15L), (10L, 20L), (30L, 40L))) == 2 && Stats.peakOverlap(Nil) == 0
    }
    println(s"selftest: $passed passed, $failed failed")
    sys.exit(if (failed == 0) 0 else 1)
  }
}
