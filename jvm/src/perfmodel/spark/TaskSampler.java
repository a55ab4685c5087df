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
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.LockSupport;
import perfmodel.jfr.StackKey;
import org.apache.spark.SparkConf;

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
  private static final long FLUSH_NS = 1_000_000_000L;
  private static TaskSampler instance;

  private final long intervalNs;
  private final BufferedWriter out;
  private final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
  private final Thread worker;
  private final long baseEpochNs;
  private final long baseNanos;
  /** Java thread id of each thread running a task now. */
  private final Map<Long, Boolean> running = new ConcurrentHashMap<>();

  private final ConcurrentLinkedQueue<String[]> taskEvents = new ConcurrentLinkedQueue<>();
  private final Map<String, Integer> frameIds = new HashMap<>();
  private final Map<StackKey, Integer> stackIds = new HashMap<>();
  private final Map<Long, Integer> threadRefs = new HashMap<>();
  private volatile boolean stopped;
  private long samples;
  private long events;
  private long lastCpuNs = -1;
  private long lastCpuAt;

  private TaskSampler(BufferedWriter out, long intervalNs) {
    this.out = out;
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
    out.write("R\t" + clean(path.toString()) + "\n");
    info("sampler", "plugin");
    info("pid", Long.toString(pid));
    info("executor_id", executorId);
    info("host", host);
    info("app_id", appId);
    info("java_arguments", System.getProperty("sun.java.command", ""));
    info("jvm_arguments", String.join(" ", ManagementFactory.getRuntimeMXBean().getInputArguments()));
    info("jvm_version", System.getProperty("java.vm.version", ""));
    info("jvm_start_ms", Long.toString(ManagementFactory.getRuntimeMXBean().getStartTime()));
    info("hw_threads", Integer.toString(Runtime.getRuntime().availableProcessors()));
    info("period.jdk.ExecutionSample", intervalMs + " ms");
    info("period.jdk.NativeMethodSample", intervalMs + " ms");
    out.flush();
  }

  /** On the task thread, when its task starts. */
  void taskStarted(long taskId, int stageId, int stageAttempt) {
    Thread t = Thread.currentThread();
    taskEvents.add(event(t, "B", taskId, stageId, stageAttempt, ""));
    running.put(t.getId(), Boolean.TRUE);
  }

  /** On the task thread, when its task ends. */
  void taskEnded(long taskId, int stageId, int stageAttempt, String status) {
    Thread t = Thread.currentThread();
    running.remove(t.getId());
    taskEvents.add(event(t, "E", taskId, stageId, stageAttempt, status));
  }

  private String[] event(
      Thread t, String phase, long taskId, int stageId, int stageAttempt, String status) {
    return new String[] {
      Long.toString(epochNanos()), phase, Long.toString(t.getId()), t.getName(),
      Long.toString(taskId), Integer.toString(stageId), Integer.toString(stageAttempt), status
    };
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
            out.flush();
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
        out.close();
      } catch (IOException e) {
        // Closed already (a second stop), or the disk is gone: nothing more to write.
      }
    }
  }

  private void drainEvents() throws IOException {
    String[] e;
    while ((e = taskEvents.poll()) != null) {
      int ref = threadRef(Long.parseLong(e[2]), e[3]);
      out.write("T\t" + e[0] + "\t" + e[1] + "\t" + ref + "\t" + e[4] + "\t" + e[5] + "\t" + e[6]
          + "\t" + clean(e[7]) + "\n");
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
      int ref = threadRef(info.getThreadId(), info.getThreadName());
      out.write("S\t" + ts + "\t" + kind + "\t" + ref + "\t" + stackId(trace));
      if (kind == 'W') {
        out.write("\t" + intervalNs);
      }
      out.write('\n');
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

  private int threadRef(long javaId, String name) throws IOException {
    Integer ref = threadRefs.get(javaId);
    if (ref == null) {
      ref = threadRefs.size();
      threadRefs.put(javaId, ref);
      out.write("H\t" + ref + "\t" + javaId + "\t0\t" + clean(name == null ? "" : name) + "\n");
    }
    return ref;
  }

  private int stackId(StackTraceElement[] trace) throws IOException {
    int n = trace.length;
    int[] ids = new int[n];
    int[] lines = new int[n];
    // The leaf comes first; the dictionary stores root first, as SampleDump does.
    for (int i = 0; i < n; i++) {
      StackTraceElement frame = trace[n - 1 - i];
      ids[i] = frameId(frame.getClassName() + "." + frame.getMethodName());
      lines[i] = Math.max(0, frame.getLineNumber());
    }
    StackKey key = new StackKey(ids, lines, false);
    Integer id = stackIds.get(key);
    if (id == null) {
      id = stackIds.size();
      stackIds.put(key, id);
      out.write(key.line(id));
    }
    return id;
  }

  private int frameId(String name) throws IOException {
    Integer id = frameIds.get(name);
    if (id == null) {
      id = frameIds.size();
      frameIds.put(name, id);
      out.write("F\t" + id + "\t" + clean(name) + "\n");
    }
    return id;
  }

  private void info(String key, String value) throws IOException {
    out.write("I\t" + key + "\t" + clean(value == null ? "" : value) + "\n");
  }

  private static String clean(String s) {
    return s.replace('\t', ' ').replace('\n', ' ').replace('\r', ' ');
  }
}
