// A bad start-up option: the launcher prints one line naming the fault and the fix, exit code 2.
package iolab.play;

public final class UsageError extends Exception {
    public UsageError(String message) {
        super(message);
    }
}
