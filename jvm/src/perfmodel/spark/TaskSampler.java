package perfmodel.spark;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.LockSupport;
import org.apache.spark.SparkConf;
import perfmodel.jfr.SampleLines;

/**
 * Samples the stacks of the threads running Spark tasks from inside the executor, without JFR.
 *
 * <p>Why: a JVM that starts a flight recording spends 0.5-0.6 s of CPU on it before {@code main}
 * (JFR generates and instruments its event classes with ASM), whatever the recording holds
 * (docs/cluster.md). On a worker with half a core, that delays every executor by a second, which
 * on a short application is most of what recording costs. This sampler needs only the platform's
 * management beans, which the JVM has loaded anyway.
 *
 * <p>What it gives up against JFR: {@link ThreadMXBean#getThreadInfo(long[], int)} stops the
 * sampled threads at a safepoint, so a sample shows where the thread next polled, not the
 * instruction it was running (JFR's samples are not biased that way); it samples only the
 * threads running tasks, so JVM threads beside the tasks appear in the per-thread CPU and the
 * JVM's CPU load, not in stacks. Every task thread is sampled every period, whatever it does: in
 * Java ({@code J}), in a native method ({@code N}), or blocked ({@code W}, standing for one
 * period of waiting).
 *
 * <p>Output: {@code perfmodel.jfr.SampleDump}'s line format, one file per JVM ({@code
 * perfmodel-<pid>.jvmsamples} in {@value #DIR}), with dictionary ids local to the file and an
 * {@code I sampler plugin} line that says so. It is flushed once a second, so a JVM that is
 * killed leaves all but its last second behind.
 */
final class TaskSampler implements Runnable {
  static final String DIR = "spark.perfmodel.samples.dir";
  static final String INTERVAL_MS = "spark.perfmodel.samples.intervalMs";
  /** With {@value #DIR}: JFR records this JVM too, and the plugin marks tasks for both. */
  static final String WITH_JFR = "spark.perfmodel.samples.withJfr";
  private static final long FLUSH_NS = 1_000_000_000L;
  private static TaskSampler instance;

  private final long intervalNs;
  private final BufferedWriter file;
  private final SampleLines out;
  private final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
  private final Thread worker;
  private final long baseEpochNs;
  private final long baseNanos;
  /** Java thread id of each thread running a task now. */
  private final Map<Long, Boolean> running = new ConcurrentHashMap<>();

  /** Task starts and ends, queued by the task threads and written by the sampler's thread. */
  private final ConcurrentLinkedQueue<TaskEvent> taskEvents = new ConcurrentLinkedQueue<>();
  private volatile boolean stopped;
  private long samples;
  private long events;
  private long lastCpuNs = -1;
  private long lastCpuAt;

  private record TaskEvent(
      long epochNanos,
      char phase,
      long threadId,
      String threadName,
      long taskId,
      int stageId,
      int stageAttempt,
      String status) {}

  private TaskSampler(BufferedWriter file, long intervalNs) {
    this.file = file;
    this.out = new SampleLines(file);
    this.intervalNs = intervalNs;
    Instant now = Instant.now();
    this.baseNanos = System.nanoTime();
    this.baseEpochNs = now.getEpochSecond() * 1_000_000_000L + now.getNano();
    this.worker = new Thread(this, "perfmodel sampler");
    this.worker.setDaemon(true);
  }

  /**
   * The JVM's sampler, started on first use when {@value #DIR} is set; null otherwise. One per
   * JVM: in local mode the driver and the executor share it.
   */
  static synchronized TaskSampler startOnce(
      SparkConf conf, String executorId, String host, String appId) {
    if (instance != null) {
      return instance;
    }
    String dir = conf.get(DIR, "");
    if (dir.isEmpty()) {
      return null;
    }
    long intervalMs = Math.max(1, conf.getLong(INTERVAL_MS, 20));
    long pid = ProcessHandle.current().pid();
    Path path = Paths.get(dir).resolve("perfmodel-" + pid + ".jvmsamples");
    try {
      Files.createDirectories(path.getParent());
      BufferedWriter writer =
          new BufferedWriter(
              new OutputStreamWriter(Files.newOutputStream(path), StandardCharsets.UTF_8), 1 << 16);
      TaskSampler sampler = new TaskSampler(writer, intervalMs * 1_000_000L);
      sampler.header(path, pid, intervalMs, executorId, host, appId);
      sampler.worker.start();
      Runtime.getRuntime()
          .addShutdownHook(new Thread(sampler::stop, "perfmodel sampler shutdown"));
      instance = sampler;
    } catch (IOException | RuntimeException e) {
      System.err.println("perfmodel plugin: could not start the task sampler: " + e);
    }
    return instance;
  }

  private void header(Path path, long pid, long intervalMs, String executorId, String host,
      String appId) throws IOException {
    out.write("R\t" + SampleLines.clean(path.toString()) + "\n");
    out.info("sampler", "plugin");
    out.info("pid", Long.toString(pid));
    out.info("executor_id", executorId);
    out.info("host", host);
    out.info("app_id", appId);
    out.info("java_arguments", System.getProperty("sun.java.command", ""));
    out.info(
        "jvm_arguments",
        String.join(" ", ManagementFactory.getRuntimeMXBean().getInputArguments()));
    out.info("jvm_version", System.getProperty("java.vm.version", ""));
    out.info("jvm_start_ms", Long.toString(ManagementFactory.getRuntimeMXBean().getStartTime()));
    out.info("hw_threads", Integer.toString(Runtime.getRuntime().availableProcessors()));
    out.info("period.jdk.ExecutionSample", intervalMs + " ms");
    out.info("period.jdk.NativeMethodSample", intervalMs + " ms");
    file.flush();
  }

  /** On the task thread, when its task starts. */
  void taskStarted(long taskId, int stageId, int stageAttempt) {
    Thread t = Thread.currentThread();
    taskEvents.add(
        new TaskEvent(epochNanos(), 'B', t.getId(), t.getName(), taskId, stageId, stageAttempt, ""));
    running.put(t.getId(), Boolean.TRUE);
  }

  /** On the task thread, when its task ends. */
  void taskEnded(long taskId, int stageId, int stageAttempt, String status) {
    Thread t = Thread.currentThread();
    running.remove(t.getId());
    taskEvents.add(
        new TaskEvent(
            epochNanos(), 'E', t.getId(), t.getName(), taskId, stageId, stageAttempt, status));
  }

  private long epochNanos() {
    return baseEpochNs + (System.nanoTime() - baseNanos);
  }

  @Override
  public void run() {
    long next = System.nanoTime();
    long nextFlush = next + FLUSH_NS;
    try {
      while (!stopped) {
        next += intervalNs;
        long wait = next - System.nanoTime();
        if (wait > 0) {
          LockSupport.parkNanos(wait);
        } else {
          next = System.nanoTime(); // behind (a long pause): no burst of catch-up samples
        }
        if (stopped) {
          break;
        }
        synchronized (this) {
          drainEvents();
          sample();
          if (System.nanoTime() >= nextFlush) {
            cpuLoad();
            file.flush();
            nextFlush += FLUSH_NS;
          }
        }
      }
    } catch (IOException | RuntimeException e) {
      System.err.println("perfmodel plugin: the task sampler stopped: " + e);
    }
  }

  /** Writes what is left and closes the file; safe to call more than once. */
  void stop() {
    stopped = true;
    LockSupport.unpark(worker);
    try {
      worker.join(2000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    synchronized (this) {
      try {
        drainEvents();
        cpuLoad();
        out.write("D\t" + samples + "\t" + events + "\n");
        file.close();
      } catch (IOException e) {
        // Closed already (a second stop), or the disk is gone: nothing more to write.
      }
    }
  }

  private void drainEvents() throws IOException {
    TaskEvent e;
    while ((e = taskEvents.poll()) != null) {
      int ref = out.thread(e.threadId(), e.threadId(), 0, e.threadName());
      out.task(e.epochNanos(), e.phase(), ref, e.taskId(), e.stageId(), e.stageAttempt(), e.status());
      events++;
    }
  }

  private void sample() throws IOException {
    if (running.isEmpty()) {
      return;
    }
    long[] ids = running.keySet().stream().mapToLong(Long::longValue).toArray();
    long ts = epochNanos();
    // One safepoint for all task threads (Thread.getStackTrace would take one per thread).
    ThreadInfo[] infos = threads.getThreadInfo(ids, Integer.MAX_VALUE);
    for (ThreadInfo info : infos) {
      if (info == null) {
        continue;
      }
      StackTraceElement[] trace = info.getStackTrace();
      if (trace.length == 0) {
        continue;
      }
      char kind;
      if (info.getThreadState() != Thread.State.RUNNABLE) {
        kind = 'W';
      } else {
        kind = info.isInNative() ? 'N' : 'J';
      }
      int ref = out.thread(info.getThreadId(), info.getThreadId(), 0, info.getThreadName());
      out.sample(ts, kind, ref, stackId(trace), intervalNs);
      samples++;
    }
  }

  /** The JVM's CPU since the last call as a share of {@code hw_threads}, as jdk.CPULoad. */
  private void cpuLoad() throws IOException {
    java.lang.management.OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
    if (!(os instanceof com.sun.management.OperatingSystemMXBean)) {
      return;
    }
    long cpu = ((com.sun.management.OperatingSystemMXBean) os).getProcessCpuTime();
    long at = System.nanoTime();
    if (cpu < 0) {
      return;
    }
    if (lastCpuNs >= 0 && at > lastCpuAt) {
      double share =
          (double) (cpu - lastCpuNs)
              / (double) (at - lastCpuAt)
              / Runtime.getRuntime().availableProcessors();
      out.write("C\t" + epochNanos() + "\t" + share + "\t0\n");
    }
    lastCpuNs = cpu;
    lastCpuAt = at;
  }

  private int stackId(StackTraceElement[] trace) throws IOException {
    int n = trace.length;
    int[] ids = new int[n];
    int[] lines = new int[n];
    // The leaf comes first; the dictionary stores root first, as SampleDump does.
    for (int i = 0; i < n; i++) {
      StackTraceElement frame = trace[n - 1 - i];
      ids[i] = out.frame(frame.getClassName() + "." + frame.getMethodName());
      lines[i] = Math.max(0, frame.getLineNumber());
    }
    return out.stack(ids, lines, false);
  }
}
