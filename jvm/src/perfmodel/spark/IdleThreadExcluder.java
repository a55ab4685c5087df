package perfmodel.spark;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Pattern;
import jdk.jfr.FlightRecorder;

/**
 * Takes threads that spend their whole life blocked in native code out of JFR's sampling.
 *
 * <p>Why: JFR samples only <em>one</em> thread in native code per native period, round-robin over
 * all of them, and a PySpark JVM keeps half a dozen threads parked in native reads for its whole
 * life (the process reaper, netty acceptors, the pipes copying Python's output, the gateway's
 * main thread waiting for the Python driver). Their samples are the same waiting stack every
 * time, and they take most of the native samples from the task threads, whose native samples
 * (socket reads from the Python worker, file reads) are what attribution needs. Excluded, they
 * leave those samples to the threads that matter, so a longer native period covers each task as
 * well as a short one did. Only threads matched by name (and, for {@code main}, by the frame it
 * waits in) are excluded.
 *
 * <p>Exclusion uses JFR's own internal switch ({@code jdk.jfr.internal.JVM.exclude}, the one JFR
 * uses for its own threads), reachable when the JVM runs with {@code
 * --add-exports=jdk.jfr/jdk.jfr.internal=ALL-UNNAMED}. Without it, or on a JVM that lacks the
 * method, a {@link ThreadExclusionEvent} with an empty thread name says why and nothing else
 * changes. Each excluded thread is announced by an event too. The switch releases the thread's
 * event buffers, which JFR itself only does for a thread that is not running; so a thread is
 * excluded only while it is blocked in a native call (it cannot be writing an event then), once,
 * and never included again. That is also why py4j's connection threads are not touched even
 * though they wait for Python most of the time: they wake up to run the driver's work at any
 * moment, and switching them back and forth while they run would not be safe.
 */
public final class IdleThreadExcluder implements Runnable {
  private static final AtomicBoolean STARTED = new AtomicBoolean();
  private static final long SCAN_MS = 500;
  private static final Pattern NETTY_ACCEPTOR = Pattern.compile("[\\w.]+-boss-\\d+-\\d+");

  private final Method exclude;
  private final Object target;
  private final Set<Long> seen = new HashSet<>();

  private IdleThreadExcluder(Method exclude, Object target) {
    this.exclude = exclude;
    this.target = target;
  }

  /** Starts the scanner once per JVM, and only while a flight recording is running. */
  public static void startOnce() {
    if (!FlightRecorder.isInitialized() || !STARTED.compareAndSet(false, true)) {
      return;
    }
    IdleThreadExcluder excluder;
    try {
      Class<?> jvm = Class.forName("jdk.jfr.internal.JVM");
      Method exclude = jvm.getMethod("exclude", Thread.class);
      // JDK 17-21: an instance method on JVM.getJVM(); JDK 22 and later: static.
      Object instance =
          Modifier.isStatic(exclude.getModifiers()) ? null : jvm.getMethod("getJVM").invoke(null);
      excluder = new IdleThreadExcluder(exclude, instance);
    } catch (ReflectiveOperationException | RuntimeException e) {
      announce("", -1, "unavailable: " + e);
      return;
    }
    Thread scanner = new Thread(excluder, "perfmodel idle-thread excluder");
    scanner.setDaemon(true);
    scanner.start();
  }

  @Override
  public void run() {
    try {
      while (true) {
        scan();
        Thread.sleep(SCAN_MS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ReflectiveOperationException | RuntimeException e) {
      announce("", -1, "stopped: " + e);
    }
  }

  private void scan() throws ReflectiveOperationException {
    for (Thread thread : allThreads()) {
      if (thread == null || seen.contains(thread.getId())) {
        continue;
      }
      String reason = reason(thread);
      if (reason == null) {
        seen.add(thread.getId());
      } else if (blockedInNative(thread)) {
        // JFR's switch releases the thread's event buffers; a thread blocked in a native read
        // is not writing to them. A thread caught running is tried again at the next scan.
        seen.add(thread.getId());
        exclude.invoke(target, thread);
        announce(thread.getName(), thread.getId(), reason);
      }
    }
  }

  private static boolean blockedInNative(Thread thread) {
    // The state first: it is a field read, while another thread's stack trace costs a VM
    // operation (a safepoint on JDK 17), and a pooled reaper is asked at every scan.
    if (thread.getState() != Thread.State.RUNNABLE) {
      return false;
    }
    StackTraceElement[] stack = thread.getStackTrace();
    return stack.length > 0 && stack[0].isNativeMethod();
  }

  /** Why a thread only ever waits in native code, or null if it may do work worth sampling. */
  static String reason(Thread thread) {
    String name = thread.getName();
    // Recent JDK 17 updates rename the reaper "process reaper (pid N)" while it waits for a
    // process (JFR's samples keep the name it started with); idle in its pool it has the plain
    // name and is parked, not in native code.
    if (name.equals("process reaper") || name.startsWith("process reaper (")) {
      return "JDK process reaper: waits for child processes to exit";
    }
    if (name.startsWith("stdout reader for ") || name.startsWith("stderr reader for ")) {
      return "copies a Python worker's output to the log";
    }
    if (name.equals("redirect output")) {
      return "copies the Python driver's output (spark-submit of a .py file)";
    }
    if (NETTY_ACCEPTOR.matcher(name).matches()) {
      return "netty acceptor: waits for connections";
    }
    if (name.equals("main") && waitsForPythonDriver(thread)) {
      return "PySpark gateway main thread: waits for the Python driver to exit";
    }
    return null;
  }

  private static boolean waitsForPythonDriver(Thread thread) {
    for (StackTraceElement frame : thread.getStackTrace()) {
      if (frame.getClassName().equals("org.apache.spark.api.python.PythonGatewayServer")) {
        return true;
      }
    }
    return false;
  }

  private static Thread[] allThreads() {
    ThreadGroup root = Thread.currentThread().getThreadGroup();
    while (root.getParent() != null) {
      root = root.getParent();
    }
    Thread[] threads = new Thread[root.activeCount() * 2 + 16];
    int n = root.enumerate(threads, true);
    while (n == threads.length) {
      threads = new Thread[threads.length * 2];
      n = root.enumerate(threads, true);
    }
    return threads;
  }

  private static void announce(String threadName, long threadId, String reason) {
    ThreadExclusionEvent event = new ThreadExclusionEvent();
    event.threadName = threadName;
    event.javaThreadId = threadId;
    event.reason = reason;
    event.commit();
  }
}
