// A request the target refuses or cannot finish, with the status and message it answers.
package iolab.play;

public final class WorkError extends RuntimeException {
    final int status;

    WorkError(int status, String message) {
        super(message, null, false, false);
        this.status = status;
    }
}
