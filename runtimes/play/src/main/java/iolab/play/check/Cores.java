// The processors the JVM sees (what Pekko and the common pool size themselves by), for ./test.
package iolab.play.check;

public final class Cores {
    private Cores() {}

    public static void main(String[] args) {
        System.out.println(Runtime.getRuntime().availableProcessors());
    }
}
