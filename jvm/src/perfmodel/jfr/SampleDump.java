package perfmodel.jfr;

import static perfmodel.jfr.SampleLines.clean;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Instant;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import jdk.jfr.EventType;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedMethod;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordedThread;
import jdk.jfr.consumer.RecordingFile;

/**
 * Streams the stack samples and perfmodel task events of JFR recordings as compact text lines.
 *
 * <p>Why not {@code jfr print --json}: it writes every field of every event (tens of MB for a
 * short job) and Python then has to parse all of it. This reader walks the recording once with
 * {@code jdk.jfr.consumer}, keeps only what attribution needs, and deduplicates frames, stacks and
 * threads into dictionaries, so the output is a few bytes per sample. One JVM start serves all
 * files given on the command line.
 *
 * <p>Output (UTF-8, one record per line, tab-separated; ids are global over the run):
 *
 * <pre>
 * R  path                                  a recording starts
 * I  key  value                            facts about the recorded JVM (pid, arguments,
 *                                          sampling periods as "period.jdk.ExecutionSample")
 * F  frameId  name                         frame dictionary: "package.Class.method"
 * K  stackId  frameIds  lines  truncated   stack dictionary, root first, comma-separated
 * H  threadRef  javaThreadId  osThreadId  name   thread dictionary
 * S  epochNanos  J|N  threadRef  stackId   a sample: J = jdk.ExecutionSample, N = Native
 * S  epochNanos  W  threadRef  stackId  durationNanos   the thread waited (jdk.ThreadPark,
 *                                          JavaMonitorWait/Enter): a blocked thread is neither in
 *                                          Java nor in native code, so no sampler ever sees it
 * T  epochNanos  B|E  threadRef  taskId  stageId  stageAttempt  status   plugin task event
 * C  epochNanos  jvmUser  jvmSystem       jdk.CPULoad: the JVM's CPU over the last period, as a
 *                                          fraction of all the host's CPUs (executor JVMs'
 *                                          CPU beside their tasks: JIT, GC, shuffle serving)
 * X  javaThreadId  name  reason            the plugin took a thread that only waits out of the
 *                                          recording; an empty name: exclusion was unavailable
 * W  message                               the recording is damaged; what came before is good
 * E  message                               the recording could not be read at all
 * D  samples  taskEvents                   the recording ends
 * </pre>
 */
public final class SampleDump {
  private final SampleLines out;
  private final IdentityHashMap<RecordedMethod, Integer> methodCache = new IdentityHashMap<>();

  private SampleDump(BufferedWriter out) {
    this.out = new SampleLines(out);
  }

  public static void main(String[] args) throws IOException {
    BufferedWriter out =
        new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8), 1 << 16);
    SampleDump dump = new SampleDump(out);
    for (String arg : args) {
      dump.dumpFile(Paths.get(arg));
    }
    out.flush();
  }

  private void dumpFile(Path path) throws IOException {
    out.write("R\t" + clean(path.toString()) + "\n");
    long samples = 0;
    long taskEvents = 0;
    RecordingFile file;
    try {
      file = new RecordingFile(path);
    } catch (IOException | RuntimeException e) {
      out.write("E\t" + clean(String.valueOf(e.getMessage())) + "\n");
      return;
    }
    try (file) {
      Map<Long, String> typeNames = new HashMap<>();
      for (EventType t : file.readEventTypes()) {
        typeNames.put(t.getId(), t.getName());
      }
      while (file.hasMoreEvents()) {
        RecordedEvent event = file.readEvent();
        String type = event.getEventType().getName();
        switch (type) {
          case "jdk.ExecutionSample":
            sample(event, 'J');
            samples++;
            break;
          case "jdk.NativeMethodSample":
            sample(event, 'N');
            samples++;
            break;
          case "jdk.ThreadPark":
          case "jdk.JavaMonitorWait":
          case "jdk.JavaMonitorEnter":
            sample(event, 'W');
            samples++;
            break;
          case "perfmodel.TaskStart":
            task(event, 'B', "");
            taskEvents++;
            break;
          case "perfmodel.TaskEnd":
            task(event, 'E', event.getString("status"));
            taskEvents++;
            break;
          case "perfmodel.ThreadExclusion":
            out.write(
                "X\t"
                    + event.getLong("javaThreadId")
                    + "\t"
                    + clean(String.valueOf(event.getString("threadName")))
                    + "\t"
                    + clean(String.valueOf(event.getString("reason")))
                    + "\n");
            break;
          case "perfmodel.ExecutorInfo":
            out.info("executor_id", event.getString("executorId"));
            out.info("host", event.getString("host"));
            out.info("app_id", event.getString("appId"));
            break;
          case "jdk.ActiveSetting":
            if ("period".equals(event.getString("name"))) {
              String owner = typeNames.get(event.getLong("id"));
              if ("jdk.ExecutionSample".equals(owner) || "jdk.NativeMethodSample".equals(owner)) {
                out.info("period." + owner, event.getString("value"));
              }
            }
            break;
          case "jdk.CPULoad":
            out.write(
                "C\t"
                    + nanos(event.getStartTime())
                    + "\t"
                    + event.getFloat("jvmUser")
                    + "\t"
                    + event.getFloat("jvmSystem")
                    + "\n");
            break;
          case "jdk.CPUInformation":
            out.info("hw_threads", Integer.toString(event.getInt("hwThreads")));
            break;
          case "jdk.JVMInformation":
            out.info("pid", Long.toString(event.getLong("pid")));
            out.info("jvm_arguments", event.getString("jvmArguments"));
            out.info("java_arguments", event.getString("javaArguments"));
            out.info("jvm_version", event.getString("jvmVersion"));
            out.info("jvm_start_ms", Long.toString(event.getInstant("jvmStartTime").toEpochMilli()));
            break;
          default:
            break;
        }
      }
    } catch (IOException | RuntimeException e) {
      // A JVM killed mid-write leaves a partial last chunk; keep everything read before it.
      out.write("W\tdamaged after " + samples + " samples: " + clean(String.valueOf(e)) + "\n");
    }
    out.write("D\t" + samples + "\t" + taskEvents + "\n");
  }

  private void sample(RecordedEvent event, char kind) throws IOException {
    boolean timed = kind == 'W';
    RecordedThread thread = timed ? event.getThread() : event.getThread("sampledThread");
    RecordedStackTrace trace = event.getStackTrace();
    if (thread == null || trace == null) {
      return;
    }
    int threadRef = threadRef(thread);
    int stackId = stackId(trace);
    long waited = timed ? event.getDuration().toNanos() : 0;
    out.sample(nanos(event.getStartTime()), kind, threadRef, stackId, waited);
  }

  private void task(RecordedEvent event, char phase, String status) throws IOException {
    RecordedThread thread = event.getThread();
    if (thread == null) {
      return;
    }
    out.task(
        nanos(event.getStartTime()),
        phase,
        threadRef(thread),
        event.getLong("taskId"),
        event.getInt("stageId"),
        event.getInt("stageAttempt"),
        status);
  }

  private static long nanos(Instant t) {
    return t.getEpochSecond() * 1_000_000_000L + t.getNano();
  }

  private int threadRef(RecordedThread thread) throws IOException {
    long javaId = thread.getJavaThreadId();
    long osId = thread.getOSThreadId();
    // Java threads are keyed by their Java id; VM-internal threads only have an OS id.
    long key = javaId > 0 ? javaId : -1_000_000L - osId;
    String name = thread.getJavaName();
    return out.thread(key, javaId, osId, name == null ? thread.getOSName() : name);
  }

  private int stackId(RecordedStackTrace trace) throws IOException {
    List<RecordedFrame> frames = trace.getFrames();
    int n = frames.size();
    int[] ids = new int[n];
    int[] lines = new int[n];
    // JFR lists the leaf first; the dictionary stores root first, as flame graphs read.
    for (int i = 0; i < n; i++) {
      RecordedFrame frame = frames.get(n - 1 - i);
      ids[i] = frameId(frame.getMethod());
      lines[i] = frame.getLineNumber();
    }
    return out.stack(ids, lines, trace.isTruncated());
  }

  private int frameId(RecordedMethod method) throws IOException {
    Integer cached = methodCache.get(method);
    if (cached != null) {
      return cached;
    }
    String name =
        method == null
            ? "<unknown>"
            : (method.getType() == null ? "<unknown>" : method.getType().getName())
                + "."
                + method.getName();
    int id = out.frame(name);
    if (method != null) {
      methodCache.put(method, id);
    }
    return id;
  }
}
